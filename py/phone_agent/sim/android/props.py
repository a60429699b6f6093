"""System properties of the simulated phone (what `getprop` shows).

A Pixel 7 running Android 14, recognisably simulated by its product name
`phone_agent_sim` and the `ro.phone_agent.sim` marker.
"""

from __future__ import annotations

SCREEN_WIDTH = 1080
SCREEN_HEIGHT = 2400
DENSITY = 420
SDK = 34


def device_props(serial: str) -> dict[str, str]:
    """The full property table for a phone with this serial number."""
    build_id = "UQ1A.240205.004"
    incremental = "11269751"
    fingerprint = f"google/phone_agent_sim/panther:14/{build_id}/{incremental}:user/release-keys"
    return {
        "dalvik.vm.heapsize": "512m",
        "gsm.sim.state": "ABSENT",
        "init.svc.adbd": "running",
        "persist.sys.locale": "en-US",
        "persist.sys.timezone": "Etc/UTC",
        "persist.sys.usb.config": "adb",
        "ro.adb.secure": "1",
        "ro.boot.serialno": serial,
        "ro.build.characteristics": "nosdcard",
        "ro.build.date.utc": "1707091200",
        "ro.build.description": f"phone_agent_sim-user 14 {build_id} {incremental} release-keys",
        "ro.build.display.id": build_id,
        "ro.build.fingerprint": fingerprint,
        "ro.build.id": build_id,
        "ro.build.tags": "release-keys",
        "ro.build.type": "user",
        "ro.build.version.codename": "REL",
        "ro.build.version.incremental": incremental,
        "ro.build.version.release": "14",
        "ro.build.version.release_or_codename": "14",
        "ro.build.version.sdk": str(SDK),
        "ro.build.version.security_patch": "2024-02-05",
        "ro.debuggable": "0",
        "ro.hardware": "panther",
        "ro.phone_agent.sim": "1",
        "ro.product.board": "panther",
        "ro.product.brand": "google",
        "ro.product.cpu.abi": "arm64-v8a",
        "ro.product.cpu.abilist": "arm64-v8a,armeabi-v7a,armeabi",
        "ro.product.cpu.abilist32": "armeabi-v7a,armeabi",
        "ro.product.cpu.abilist64": "arm64-v8a",
        "ro.product.device": "panther",
        "ro.product.locale": "en-US",
        "ro.product.manufacturer": "Google",
        "ro.product.model": "Pixel 7",
        "ro.product.name": "phone_agent_sim",
        "ro.secure": "1",
        "ro.serialno": serial,
        "ro.sf.lcd_density": str(DENSITY),
        "service.adb.root": "0",
        "sys.boot_completed": "1",
        "sys.usb.state": "adb",
    }
