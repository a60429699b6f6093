"""The simulated phone's initial content: contacts with their message history
and the Catalog app's items."""

from __future__ import annotations

from dataclasses import dataclass

CONTACTS: dict[str, str] = {
    "Zhang San": "+8613800138000",
    "Li Si": "+8613900139000",
    "Mom": "+15550100",
    "Alex Chen": "+15550123",
    "Wang Wu": "+8613700137000",
}

# Most recent conversation first.
INITIAL_MESSAGES: dict[str, list[dict[str, str]]] = {
    "Zhang San": [
        {"from": "them", "text": "Hi! Are we still meeting this week?"},
        {"from": "me", "text": "Yes, Thursday works for me."},
        {"from": "them", "text": "Great. Same place as last time?"},
    ],
    "Mom": [
        {"from": "them", "text": "Don't forget to call grandma on Sunday."},
        {"from": "me", "text": "I won't!"},
        {"from": "them", "text": "Dinner at 7 on Saturday?"},
    ],
    "Li Si": [
        {"from": "them", "text": "Did you get the report?"},
        {"from": "me", "text": "Yes, reading it now."},
        {"from": "them", "text": "Thanks, let me know what you think."},
    ],
    "Alex Chen": [
        {"from": "me", "text": "Lunch tomorrow?"},
        {"from": "them", "text": "Sure, 12:30 at the usual place."},
    ],
    "Wang Wu": [
        {"from": "them", "text": "The package arrived today."},
    ],
}

_ADJECTIVES = (
    "Amber Azure Brisk Bronze Calm Cobalt Crimson Dusky Eager Emerald Fleet Frosty Gentle Golden "
    "Hazel Humble Indigo Ivory Jade Jolly Keen Lively Lunar Misty Mossy Noble Ochre Olive Pale "
    "Quiet Rapid Rosy Rusty Sable Scarlet Silver Sleek Solar Stormy Swift Tawny Teal Umber Velvet "
    "Vivid Wild Witty Young Zesty Zircon"
).split()
_ANIMALS = (
    "Falcon Otter Heron Badger Lynx Marten Fox Owl Wren Bison Crane Hare Ibis Jackal Koala Lemur "
    "Moose Newt Osprey Panda Quail Raven Seal Tapir Viper"
).split()


@dataclass(frozen=True)
class CatalogItem:
    """One row of the Catalog app, and what its detail page shows."""

    number: int
    name: str
    price_cents: int
    stock: int

    @property
    def title(self) -> str:
        return f"Item {self.number:02d} - {self.name}"

    @property
    def price(self) -> str:
        return f"${self.price_cents // 100}.{self.price_cents % 100:02d}"

    @property
    def subtitle(self) -> str:
        return f"{self.price}  |  {self.stock} in stock"

    @property
    def description(self) -> str:
        return (
            f"The {self.name} is item number {self.number} of the catalog. "
            f"It costs {self.price} and {self.stock} are in stock."
        )


CATALOG_ITEMS: list[CatalogItem] = [
    CatalogItem(
        number=i + 1,
        name=f"{_ADJECTIVES[i]} {_ANIMALS[(i * 7) % len(_ANIMALS)]}",
        price_cents=499 + (i * 1373) % 9000,
        stock=(i * 13) % 40,
    )
    for i in range(50)
]
