from django.apps import AppConfig
from django.conf import settings


class InventoryConfig(AppConfig):
    name = "inventory"
    verbose_name = "Cluster inventory"

    def ready(self) -> None:
        import matching

        # The grids of parsed inventories (inventory.parsed) keep this many texts each.
        matching.Grid.text_memo_entries = settings.CACHE_ENTRIES["grid_texts"]
