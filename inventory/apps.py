from django.apps import AppConfig
from django.conf import settings


class InventoryConfig(AppConfig):
    name = "inventory"
    verbose_name = "Cluster inventory"

    def ready(self) -> None:
        import matching
        from core.db import bound_idle_transactions

        # The grids of parsed inventories (inventory.parsed) keep this many texts each.
        matching.Grid.text_memo_entries = settings.CACHE_ENTRIES["grid_texts"]
        # Every process that writes (web, workers, commands) may hold a cluster's write lock
        # (inventory.locks): frozen, it gives it up after this bound.
        bound_idle_transactions(settings.OME_DB_IDLE_TRANSACTION_TIMEOUT)
