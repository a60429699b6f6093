"""``adb.device.phone_call``: the one mapping of ADB and sync failures to the tools' errors."""

import asyncio

import pytest

from phone_agent.adb.client import AdbConnectionLost, AdbError, AdbTimeoutError
from phone_agent.adb.device import RECONNECT_REMEDY, phone_call
from phone_agent.adb.sync_protocol import SyncError
from phone_agent.errors import DeviceError, ErrorCode, PhoneDisconnectedError


def mapped(exc: BaseException, **wording: str) -> DeviceError:
    with pytest.raises(DeviceError) as caught:
        with phone_call("could not read /x from the phone", **wording):
            raise exc
    return caught.value


def test_a_lost_connection_is_no_device_with_its_reason():
    error = mapped(AdbConnectionLost("transport closed"))
    assert isinstance(error, PhoneDisconnectedError)
    assert error.code is ErrorCode.NO_DEVICE and error.details == {"reason": "transport closed"}


def test_a_timeout_takes_the_calls_own_words_when_it_has_them():
    error = mapped(AdbTimeoutError("late"), timed_out="the phone took too long", timeout_remedy="Wake it.")
    assert (error.code, error.message, error.remedy) == (
        ErrorCode.DEVICE_ERROR,
        "the phone took too long",
        "Wake it.",
    )
    assert mapped(TimeoutError(), timed_out="slow").message == "slow"


def test_a_timeout_without_words_is_a_failure_that_says_it_timed_out():
    assert mapped(TimeoutError()).message == "could not read /x from the phone: timed out"
    assert mapped(AdbTimeoutError("no answer in 5 s")).message == (
        "could not read /x from the phone: no answer in 5 s"
    )


def test_adb_failures_carry_the_calls_remedy_and_sync_failures_the_default():
    adb = mapped(AdbError("closed by the device"), remedy=RECONNECT_REMEDY)
    assert adb.message == "could not read /x from the phone: closed by the device"
    assert adb.remedy == RECONNECT_REMEDY and adb.retryable
    sync = mapped(SyncError("No such file or directory"), remedy=RECONNECT_REMEDY)
    assert sync.message == "could not read /x from the phone: No such file or directory"
    assert sync.remedy == DeviceError("x").remedy


def test_anything_else_and_cancellation_pass_through():
    with pytest.raises(ValueError):
        with phone_call("x"):
            raise ValueError("not the phone's")
    with pytest.raises(asyncio.CancelledError):
        with phone_call("x"):
            raise asyncio.CancelledError
