"""Android's ADB RSA keys: the RSAPUBLICKEY struct, the AUTH signature, and key generation.

The device sends AUTH(TOKEN) with 20 random bytes. The host signs them as an *already computed*
SHA-1 digest (PKCS#1 v1.5: ``00 01 FF… 00 || DigestInfo(SHA-1) || token``, then ``m^d mod n``) and,
if the device trusts none of its keys, sends its public key as base64 of Android's 524-byte
little-endian struct (``len words, n0inv, modulus, rr, exponent``) + `` user@host`` + NUL.

Pure Python (``pow``), so the same code runs in CPython and Pyodide: ``AdbPrivateKey.sign`` for the
host, ``AdbPublicKey.verify`` for the device.
"""

from __future__ import annotations

import base64
import binascii
import math
import secrets
import struct
from dataclasses import dataclass

TOKEN_SIZE = 20
KEY_BITS = 2048
KEY_BYTES = KEY_BITS // 8
KEY_WORDS = KEY_BYTES // 4
PUBLIC_KEY_STRUCT_SIZE = 4 + 4 + KEY_BYTES + KEY_BYTES + 4  # 524
DEFAULT_EXPONENT = 65537

# DER DigestInfo prefix for SHA-1 (RFC 8017, section 9.2, note 1).
SHA1_DIGEST_INFO = bytes.fromhex("3021300906052b0e03021a05000414")

_STRUCT_HEAD = struct.Struct("<II")


class AdbKeyError(ValueError):
    """A public key, private key or signature that cannot be used."""


def pkcs1_sha1_padding(digest: bytes, size: int = KEY_BYTES) -> bytes:
    """The PKCS#1 v1.5 block over ``digest`` taken as a SHA-1 digest (never hashed again)."""
    if len(digest) != TOKEN_SIZE:
        raise AdbKeyError(f"an ADB token is {TOKEN_SIZE} bytes, got {len(digest)}")
    tail = SHA1_DIGEST_INFO + digest
    return b"\x00\x01" + b"\xff" * (size - len(tail) - 3) + b"\x00" + tail


@dataclass(frozen=True, slots=True)
class AdbPublicKey:
    """An RSA public key as adb sees it; ``comment`` is the `` user@host`` part."""

    n: int
    e: int = DEFAULT_EXPONENT
    comment: str = ""

    def verify(self, token: bytes, signature: bytes) -> bool:
        """True when ``signature`` is this key's PKCS#1 v1.5 SHA-1 signature of ``token``."""
        size = (self.n.bit_length() + 7) // 8
        if len(token) != TOKEN_SIZE or len(signature) != size:
            return False
        s = int.from_bytes(signature, "big")
        if s >= self.n:
            return False
        recovered = pow(s, self.e, self.n).to_bytes(size, "big")
        return secrets.compare_digest(recovered, pkcs1_sha1_padding(token, size))

    def to_struct(self) -> bytes:
        """Android's 524-byte RSAPublicKey struct (little-endian words)."""
        if self.n.bit_length() != KEY_BITS:
            raise AdbKeyError(f"adb keys are {KEY_BITS}-bit, this modulus has {self.n.bit_length()} bits")
        n0inv = (-pow(self.n, -1, 1 << 32)) & 0xFFFFFFFF
        rr = pow(2, 2 * KEY_BITS, self.n)
        return (
            _STRUCT_HEAD.pack(KEY_WORDS, n0inv)
            + self.n.to_bytes(KEY_BYTES, "little")
            + rr.to_bytes(KEY_BYTES, "little")
            + struct.pack("<I", self.e)
        )

    @classmethod
    def from_struct(cls, data: bytes, comment: str = "") -> AdbPublicKey:
        """Parse the 524-byte struct, checking its word count, n0inv and rr."""
        if len(data) != PUBLIC_KEY_STRUCT_SIZE:
            raise AdbKeyError(f"an adb public key struct is {PUBLIC_KEY_STRUCT_SIZE} bytes, got {len(data)}")
        words, n0inv = _STRUCT_HEAD.unpack_from(data)
        if words != KEY_WORDS:
            raise AdbKeyError(f"modulus of {words} words, expected {KEY_WORDS}")
        n = int.from_bytes(data[8 : 8 + KEY_BYTES], "little")
        rr = int.from_bytes(data[8 + KEY_BYTES : 8 + 2 * KEY_BYTES], "little")
        (e,) = struct.unpack_from("<I", data, 8 + 2 * KEY_BYTES)
        if n.bit_length() != KEY_BITS or n % 2 == 0:
            raise AdbKeyError("the modulus is not an odd 2048-bit number")
        if (n0inv * n) & 0xFFFFFFFF != 0xFFFFFFFF:
            raise AdbKeyError("n0inv does not match the modulus")
        if rr != pow(2, 2 * KEY_BITS, n):
            raise AdbKeyError("rr does not match the modulus")
        if e < 3 or e % 2 == 0:
            raise AdbKeyError(f"unusable public exponent {e}")
        return cls(n, e, comment)

    def encode(self) -> bytes:
        """The AUTH(RSAPUBLICKEY) payload: base64 of the struct, `` comment``, NUL."""
        text = base64.b64encode(self.to_struct())
        if self.comment:
            text += b" " + self.comment.encode()
        return text + b"\x00"

    @classmethod
    def decode(cls, payload: bytes) -> AdbPublicKey:
        """Parse an AUTH(RSAPUBLICKEY) payload (or a line of adbkey.pub / adb_keys)."""
        text = payload.split(b"\x00", 1)[0].strip()
        encoded, _, comment = text.partition(b" ")
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise AdbKeyError(f"the public key is not valid base64: {exc}") from exc
        return cls.from_struct(raw, comment.decode("utf-8", "replace").strip())

    @property
    def fingerprint(self) -> str:
        """A short stable name for logs and the control interface (hex of the modulus' low bytes)."""
        return self.n.to_bytes(KEY_BYTES, "big")[-8:].hex()


@dataclass(frozen=True, slots=True)
class AdbPrivateKey:
    """An RSA private key; enough to answer AUTH(TOKEN)."""

    n: int
    d: int
    e: int = DEFAULT_EXPONENT

    def sign(self, token: bytes) -> bytes:
        """The AUTH(SIGNATURE) payload for ``token``: ``pad(token)^d mod n``, big-endian."""
        size = (self.n.bit_length() + 7) // 8
        m = int.from_bytes(pkcs1_sha1_padding(token, size), "big")
        return pow(m, self.d, self.n).to_bytes(size, "big")

    def public_key(self, comment: str = "") -> AdbPublicKey:
        """The matching public key."""
        return AdbPublicKey(self.n, self.e, comment)


_SMALL_PRIMES = [p for p in range(3, 2000) if all(p % q for q in range(2, math.isqrt(p) + 1))]


def _is_probable_prime(n: int, rounds: int = 24) -> bool:
    for p in _SMALL_PRIMES:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d //= 2
        r += 1
    for _ in range(rounds):
        a = secrets.randbelow(n - 3) + 2
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def _random_prime(bits: int, e: int) -> int:
    while True:
        candidate = secrets.randbits(bits) | (0b11 << (bits - 2)) | 1
        if math.gcd(candidate - 1, e) == 1 and _is_probable_prime(candidate):
            return candidate


def generate_private_key(bits: int = KEY_BITS, e: int = DEFAULT_EXPONENT) -> AdbPrivateKey:
    """A new RSA key in pure Python (about a second in CPython for 2048 bits; slower in Pyodide)."""
    while True:
        p = _random_prime(bits // 2, e)
        q = _random_prime(bits // 2, e)
        n = p * q
        if p != q and n.bit_length() == bits:
            d = pow(e, -1, math.lcm(p - 1, q - 1))
            return AdbPrivateKey(n, d, e)
