"""The architecture plumbing of the image build (tests/ops/image.py, image_multiarch.py): the
commands built for a foreign architecture, and the stop, before building, where QEMU's binfmt
handler is missing. The build itself is `make image-multiarch`: far too slow for the suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ops import image, image_multiarch

FOREIGN = next(arch for arch in image.QEMU_NAMES if arch != image.host_arch())


def test_a_foreign_architecture_reaches_mmdebstrap_and_podman() -> None:
    assert f"--arch={FOREIGN}" in image.mmdebstrap_argv(FOREIGN, Path("base.tar"))
    build = image.podman_build_argv(FOREIGN)
    assert build[build.index("--platform") + 1] == f"linux/{FOREIGN}"


@pytest.fixture
def binfmt_misc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(image, "BINFMT_MISC", tmp_path)
    return tmp_path


def test_emulation_needs_binfmt_misc_mounted_and_an_enabled_qemu_handler(binfmt_misc: Path) -> None:
    assert "mount -t binfmt_misc" in str(image.missing_emulation(FOREIGN))

    (binfmt_misc / "status").write_text("enabled\n")
    assert "apt-get install qemu-user-static" in str(image.missing_emulation(FOREIGN))

    handler = binfmt_misc / f"qemu-{image.QEMU_NAMES[FOREIGN]}"
    handler.write_text("disabled\ninterpreter /usr/libexec/qemu-binfmt/x\n")
    assert "apt-get install qemu-user-static" in str(image.missing_emulation(FOREIGN))

    handler.write_text("enabled\ninterpreter /usr/libexec/qemu-binfmt/x\n")
    assert image.missing_emulation(FOREIGN) is None
    assert image.missing_emulation(image.host_arch()) is None


def test_the_multiarch_build_stops_before_building_and_says_what_is_missing(
    binfmt_misc: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_command(*args: object, **kwargs: object) -> None:
        raise AssertionError("nothing may run")

    monkeypatch.setattr(image_multiarch, "run", no_command)
    monkeypatch.setattr(image_multiarch.subprocess, "run", no_command)

    assert image_multiarch.main(["--arch", FOREIGN]) == 2
    assert f"mount -t binfmt_misc binfmt_misc {binfmt_misc}" in capsys.readouterr().err
