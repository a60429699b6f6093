"""The phone's contract: the VirtualPhone is the AndroidPhone its commands and screens are written against."""

from __future__ import annotations

import inspect

from phone_agent.sim.android.contract import AndroidPhone
from phone_agent.sim.android.phone import VirtualPhone


def protocol_members(protocol: type) -> dict[str, object]:
    members = {name: None for name in protocol.__annotations__}
    for name, value in vars(protocol).items():
        if inspect.isfunction(value) and not name.startswith("_"):
            members[name] = value
    return members


def test_the_virtual_phone_has_every_member_of_the_android_phone_contract():
    phone = VirtualPhone()
    members = protocol_members(AndroidPhone)
    assert len(members) > 30
    assert [name for name in members if not hasattr(phone, name)] == []


def test_the_contract_methods_take_the_arguments_the_virtual_phone_takes():
    for name, method in protocol_members(AndroidPhone).items():
        if method is None:
            continue
        wanted = list(inspect.signature(method).parameters)
        actual = list(inspect.signature(getattr(VirtualPhone, name)).parameters)
        assert actual == wanted, name
