"""Tests for phone_agent.adb.keys: Android's public-key struct and the AUTH signature."""

import os
import struct

import pytest

from phone_agent.adb.keys import (
    PUBLIC_KEY_STRUCT_SIZE,
    AdbKeyError,
    AdbPublicKey,
    generate_private_key,
    pkcs1_sha1_padding,
)


@pytest.fixture(scope="module")
def key():
    return generate_private_key()


def test_struct_layout_is_little_endian_with_n0inv_rr_and_exponent(key):
    raw = key.public_key().to_struct()
    assert len(raw) == PUBLIC_KEY_STRUCT_SIZE == 524
    words, n0inv = struct.unpack_from("<II", raw)
    assert words == 64
    assert (n0inv * key.n) % 2**32 == 2**32 - 1
    assert int.from_bytes(raw[8:264], "little") == key.n
    assert int.from_bytes(raw[264:520], "little") == pow(2, 4096, key.n)
    assert struct.unpack_from("<I", raw, 520)[0] == 65537


def test_encoded_key_is_base64_comment_and_nul(key):
    payload = key.public_key("me@box").encode()
    assert payload.endswith(b" me@box\x00")
    assert AdbPublicKey.decode(payload) == key.public_key("me@box")


def test_padding_takes_the_token_as_a_sha1_digest():
    token = bytes(range(20))
    block = pkcs1_sha1_padding(token)
    assert len(block) == 256 and block.startswith(b"\x00\x01\xff")
    assert block.endswith(bytes.fromhex("003021300906052b0e03021a05000414") + token)


def test_signature_verifies_and_a_wrong_one_does_not(key):
    token = os.urandom(20)
    signature = key.sign(token)
    public = key.public_key()
    assert public.verify(token, signature)
    assert not public.verify(os.urandom(20), signature)
    assert not public.verify(token, signature[:-1] + bytes([signature[-1] ^ 1]))
    assert not generate_private_key().public_key().verify(token, signature)


def test_corrupt_struct_is_rejected(key):
    raw = bytearray(key.public_key().to_struct())
    raw[4] ^= 1
    with pytest.raises(AdbKeyError, match="n0inv"):
        AdbPublicKey.from_struct(bytes(raw))
    with pytest.raises(AdbKeyError, match="base64"):
        AdbPublicKey.decode(b"@@@@ user@host\x00")


def test_interoperates_with_adb_shell_keys(tmp_path):
    from adb_shell.auth.keygen import keygen
    from adb_shell.auth.sign_pythonrsa import PythonRSASigner

    keygen(str(tmp_path / "adbkey"))
    signer = PythonRSASigner.FromRSAKeyPath(str(tmp_path / "adbkey"))
    public = AdbPublicKey.decode(signer.GetPublicKey().encode())
    token = os.urandom(20)
    assert public.verify(token, signer.Sign(token))
