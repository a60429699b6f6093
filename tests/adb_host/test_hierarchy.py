"""The hierarchy server (u2.jar) through our own ADB client, against the simulated phone's: the jar
pushed once (its md5 checked), the server started with uiautomator2's command line and spoken to over
a ``tcp:9008`` stream (no ``adb forward``), the same tree ``uiautomator dump`` gives, and every way it
fails — killed between calls, dying mid-call, another UiAutomation user, no jar, no app_process —
restarted once, then ``uiautomator dump``, each answer saying which source read the tree and why."""

from __future__ import annotations

import asyncio

import pytest

from phone_agent.adb.device import AdbDevice
from phone_agent.adb.hierarchy_protocol import JAR_PATH, start_command
from phone_agent.adb.services import shell
from phone_agent.device.interface import TREE_DUMP, TREE_SERVER
from phone_agent.server.adb_tcp import connect_adbd
from tests.support import ROOT, vendored

JAR = ROOT / "static" / "vendor" / "u2" / "u2.jar"


@pytest.fixture(scope="module")
def jar() -> bytes:
    return vendored(JAR, "u2.jar")


SIM_OPTIONS = {"scrcpy": True}  # a phone with app_process


@pytest.fixture
async def device(client, jar) -> AdbDevice:
    phone = AdbDevice(client, transport="tcp", hierarchy_jar=jar)
    yield phone
    if phone.hierarchy is not None:
        await phone.hierarchy.close()


def _shape(nodes):
    return [(n.class_name, n.text, n.resource_id, n.bounds, n.checked, n.depth) for n in nodes]


async def test_the_tree_comes_from_the_server_and_equals_uiautomator_dumps(device, sim):
    tree = await device.ui_tree()
    assert tree.source == TREE_SERVER and tree.note == ""
    assert sim.hierarchy.dumps == 1 and device.hierarchy.pushed and device.hierarchy.starts == 1
    assert _shape(tree.nodes) == _shape((await device._dump_nodes()).nodes)
    # the server stays up: the next looks are one HTTP exchange each on the same stream
    requests = sim.hierarchy.running()[0].requests
    again = await device.ui_tree()
    assert again.source == TREE_SERVER and sim.hierarchy.dumps == 2
    assert sim.hierarchy.running()[0].requests == requests + 1
    assert device.hierarchy.starts == 1
    assert await device.wait_settled(2000) is True


async def test_the_jar_is_pushed_only_when_the_phones_md5_differs(client, sim, jar):
    sim.fs.write_file(JAR_PATH, jar)
    phone = AdbDevice(client, transport="tcp", hierarchy_jar=jar)
    try:
        assert (await phone.ui_tree()).source == TREE_SERVER
        assert phone.hierarchy.pushed is False
    finally:
        await phone.hierarchy.close()
    sim.fs.write_file(JAR_PATH, b"an older jar")
    phone = AdbDevice(client, transport="tcp", hierarchy_jar=jar)
    try:
        assert (await phone.ui_tree()).source == TREE_SERVER
        assert phone.hierarchy.pushed is True and sim.fs.read_file(JAR_PATH) == jar
    finally:
        await phone.hierarchy.close()


async def test_a_server_killed_between_calls_is_restarted_and_the_answer_says_so(device, sim):
    await device.ui_tree()
    (process,) = sim.hierarchy.running()
    result = await shell(device.opener, f"kill {process.pid}")
    assert result.exit_code == 0
    await asyncio.wait_for(process.ended.wait(), 5)
    tree = await device.ui_tree()
    assert tree.source == TREE_SERVER
    assert "restarted" in tree.note and "could not reach the hierarchy server" in tree.note
    assert device.hierarchy.starts == 2 and len(sim.hierarchy.running()) == 1


async def test_a_server_dying_mid_call_is_restarted_once(device, sim):
    await device.ui_tree()
    (process,) = sim.hierarchy.running()
    slow = {"first": True}

    def cost() -> float:  # the first dump takes long; the server is killed while it works
        if slow.pop("first", False):
            asyncio.get_running_loop().call_later(0.1, process.stop)
            return 0.5
        return 0.0

    sim.phone.hierarchy_dump_seconds = cost
    tree = await device.ui_tree()
    assert tree.source == TREE_SERVER and "restarted" in tree.note
    assert device.hierarchy.starts == 2


async def test_another_uiautomation_user_means_the_dump_fallback_with_the_reason(device, sim, jar):
    sim.fs.write_file(JAR_PATH, jar)
    other = await device.opener.open_stream(f"shell,v2,raw:{start_command(9009)}")  # someone else's u2
    try:
        for _ in range(100):
            if sim.hierarchy.running():
                break
            await asyncio.sleep(0.01)
        tree = await device.ui_tree()
        assert tree.source == TREE_DUMP
        assert "already registered" in tree.note and "after a restart" in tree.note
        assert device.hierarchy.starts == 2  # tried, then restarted once
        assert tree.nodes and any(n.text == "Settings" for n in tree.nodes)
        # for a while the looks go straight to the dump, still saying why
        later = await device.ui_tree()
        assert later.source == TREE_DUMP and "not used for now" in later.note
        assert device.hierarchy.starts == 2
    finally:
        await other.close()


async def test_a_jar_that_is_not_uiautomator2s_is_never_pushed(client, sim):
    phone = AdbDevice(client, transport="tcp", hierarchy_jar=b"not the jar")
    tree = await phone.ui_tree()
    assert tree.source == TREE_DUMP and "run scripts/setup" in tree.note
    assert not sim.fs.exists(JAR_PATH)


async def test_a_missing_jar_on_the_phone_is_pushed_again_on_the_restart(device, sim):
    await device.ui_tree()
    (process,) = sim.hierarchy.running()
    sim.fs.remove(JAR_PATH)
    process.stop()
    tree = await device.ui_tree()
    assert tree.source == TREE_SERVER and "restarted" in tree.note
    assert sim.fs.exists(JAR_PATH)


async def test_a_phone_without_app_process_reads_by_dump_and_says_why(make_sim, host_key, jar):
    sim = await make_sim(scrcpy=False)
    sim.trust_key(host_key.public_key("tests@hierarchy"))
    client = await connect_adbd("127.0.0.1", sim.port, host_key)
    try:
        phone = AdbDevice(client, transport="tcp", hierarchy_jar=jar)
        tree = await phone.ui_tree()
        assert tree.source == TREE_DUMP and "app_process: inaccessible or not found" in tree.note
    finally:
        await client.close()


async def test_a_wait_never_starts_the_server_and_a_start_cut_short_leaves_nothing_behind(device, sim):
    assert await device.wait_settled(100) is None  # not running: nothing to ask, nothing started
    assert device.hierarchy.starts == 0 and not sim.hierarchy.running()
    started = asyncio.ensure_future(device.ui_tree())
    for _ in range(500):  # cut the first start short once its process runs, before /ping answers
        if device.hierarchy.starts:
            break
        await asyncio.sleep(0.002)
    started.cancel()
    await asyncio.gather(started, return_exceptions=True)
    tree = await device.ui_tree()
    assert tree.source == TREE_SERVER, tree.note
    assert len(sim.hierarchy.running()) <= 1


class ChunkedJar:
    """The jar as the page's fetch hands it over: chunk by chunk (``adb.hierarchy.JarStream``)."""

    def __init__(self, data: bytes, chunk: int = 65536) -> None:
        self.size = len(data)
        self._chunks = [data[offset : offset + chunk] for offset in range(0, len(data), chunk)]
        self.reads = 0

    async def read(self) -> bytes | None:
        self.reads += 1
        return self._chunks.pop(0) if self._chunks else None


async def test_a_jar_that_arrives_in_chunks_is_pushed_as_it_comes(client, sim, jar):
    streamed = ChunkedJar(jar)

    async def fetch() -> ChunkedJar:
        return streamed

    phone = AdbDevice(client, transport="tcp", hierarchy_jar=fetch)
    try:
        assert (await phone.ui_tree()).source == TREE_SERVER
        assert phone.hierarchy.pushed and sim.fs.read_file(JAR_PATH) == jar
        assert streamed.reads == len(jar) // 65536 + 2  # every chunk, then the end
    finally:
        await phone.hierarchy.close()


async def test_a_streamed_jar_that_is_not_uiautomator2s_is_taken_off_the_phone(client, sim):
    async def fetch() -> ChunkedJar:
        return ChunkedJar(b"not the jar")

    phone = AdbDevice(client, transport="tcp", hierarchy_jar=fetch)
    tree = await phone.ui_tree()
    assert tree.source == TREE_DUMP and "run scripts/setup" in tree.note
    assert not sim.fs.exists(JAR_PATH)
