"""The frames the server reads and writes itself (server/frames.py), fed as bytes: no socket.

Every frame written is what websockets' own parser reads on a client's side; every small data
frame a client sends is read as websockets reads it on the server's, however the bytes are
cut; anything else (RFC 6455 §5.2: control frames, fragments, reserved bits, 64-bit lengths,
unmasked frames, frames over the limit) is handed back whole from its first byte, for the full
parser; text that is not UTF-8 is refused (§8.1).
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest
from websockets.frames import Frame, Opcode
from websockets.streams import StreamReader

from olympus.server.frames import BINARY, TEXT, InvalidText, SmallFrames, frame

LENGTHS = (0, 1, 125, 126, 127, 65_535)  # 7- and 16-bit lengths: what the reader reads


def client_frame(first: int, payload: bytes, *, masked: bool = True, length_bits: int = 0) -> bytes:
    """A client's frame: ``first`` its first byte (FIN, RSV, opcode); the length in the fewest
    bits unless ``length_bits`` (16 or 64) asks for more."""
    n = len(payload)
    mask_bit = 0x80 if masked else 0
    if length_bits == 64 or n >= 1 << 16:
        head = bytes([first, mask_bit | 127]) + n.to_bytes(8, "big")
    elif length_bits == 16 or n >= 126:
        head = bytes([first, mask_bit | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([first, mask_bit | n])
    if not masked:
        return head + payload
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def parse(data: bytes, *, mask: bool) -> list[Frame]:
    """websockets' own parser over ``data``: the frames it reads (``mask``: the server's side,
    which requires masked frames)."""
    reader = StreamReader()
    reader.feed_data(data)
    frames = []
    while reader.buffer:
        generator: Generator[Any, Any, Frame] = Frame.parse(
            reader.read_exact, mask=mask, max_size=None, extensions=None
        )
        try:
            while True:
                next(generator)
        except StopIteration as done:
            frames.append(done.value)
    return frames


@pytest.mark.parametrize("length", [*LENGTHS, 65_536, 70_000])
@pytest.mark.parametrize("kind", ["text", "binary"])
def test_a_frame_written_is_what_a_client_reads(length: int, kind: str) -> None:
    """The header in 7, 16 or 64 bits by the payload's length in bytes, unmasked, FIN."""
    payload: bytes | str = bytes([length % 251]) * length
    if kind == "text":
        payload = "é" * (length // 2) + "x" * (length % 2)  # two bytes per "é"
    written = frame(payload)
    (read,) = parse(written, mask=False)
    assert read.fin and not (read.rsv1 or read.rsv2 or read.rsv3)
    if isinstance(payload, str):
        assert read.opcode is Opcode.TEXT and bytes(read.data).decode() == payload
    else:
        assert read.opcode is Opcode.BINARY and bytes(read.data) == payload
    size = len(read.data)
    assert written[1] == (size if size < 126 else 126 if size < 1 << 16 else 127)


def volley() -> tuple[bytes, list[bytes | str]]:
    """Small data frames of every length form, text and binary, and what they say."""
    said: list[bytes | str] = []
    stream = b""
    for n in LENGTHS:
        data = bytes([n % 251]) * n
        text = "é" * (n // 2) + "x" * (n % 2)
        stream += client_frame(BINARY, data) + client_frame(TEXT, text.encode())
        said += [data, text]
    return stream, said


@pytest.mark.parametrize("cut", [1, 2, 3, 7, 64, 1000, None])
def test_small_frames_are_read_however_the_bytes_are_cut(cut: int | None) -> None:
    stream, said = volley()
    reader = SmallFrames(limit=None)
    read: list[bytes | str] = []
    step = cut or len(stream)
    for at in range(0, len(stream), step):
        messages, rest = reader.read(stream[at : at + step])
        assert rest is None
        read += messages
    assert read == said
    assert reader.pending == b""


OTHERS = {  # what the reader leaves to websockets, each after a small frame it reads
    "a ping": client_frame(0x89, b"ping"),
    "a pong": client_frame(0x8A, b"pong"),
    "a close": client_frame(0x88, (1000).to_bytes(2, "big")),
    "a fragment": client_frame(0x01, b"first part"),
    "a continuation": client_frame(0x80, b"last part"),
    "reserved bits": client_frame(0xC1, b"compressed?"),
    "a 64-bit length": client_frame(BINARY, b"short, said long", length_bits=64),
    "a large frame": client_frame(BINARY, b"x" * 65_536),
    "an unmasked frame": client_frame(BINARY, b"in clear", masked=False),
    "an unknown opcode": client_frame(0x83, b"?"),
}


@pytest.mark.parametrize("case", list(OTHERS))
def test_any_other_frame_is_handed_back_whole_with_all_after_it(case: str) -> None:
    before = client_frame(TEXT, b"read here")
    after = client_frame(BINARY, b"after it: not read here")
    reader = SmallFrames(limit=None)
    messages, rest = reader.read(before + OTHERS[case] + after)
    assert messages == ["read here"]
    assert rest == OTHERS[case] + after
    assert reader.pending == b""


def test_a_frame_over_the_limit_is_handed_back() -> None:
    reader = SmallFrames(limit=100)
    at_limit, over = client_frame(BINARY, b"x" * 100), client_frame(BINARY, b"y" * 101)
    messages, rest = reader.read(at_limit + over)
    assert messages == [b"x" * 100]
    assert rest == over


def test_a_frame_cut_anywhere_waits_for_its_rest() -> None:
    """Cut inside the header, the 16-bit length, the mask or the payload: nothing is read and
    nothing handed back until the frame is whole."""
    whole = client_frame(TEXT, ("ü" * 100).encode())
    for cut in range(1, len(whole)):
        reader = SmallFrames(limit=None)
        assert reader.read(whole[:cut]) == ([], None)
        assert reader.read(whole[cut:]) == (["ü" * 100], None)


def test_text_that_is_not_utf8_is_refused_after_what_came_before() -> None:
    reader = SmallFrames(limit=None)
    stream = client_frame(BINARY, b"fine") + client_frame(TEXT, b"\xff\xfe") + client_frame(
        TEXT, b"never read"
    )
    with pytest.raises(InvalidText, match="position 0") as refused:
        reader.read(stream)
    assert refused.value.messages == [b"fine"]
    # a character cut by the frame's end is not UTF-8 either (§5.6: each message is whole)
    with pytest.raises(InvalidText):
        SmallFrames(limit=None).read(client_frame(TEXT, "é".encode()[:1]))


def test_the_reader_agrees_with_websockets_parser() -> None:
    """The same bytes through websockets' server-side parser give the same messages."""
    stream, said = volley()
    frames = parse(stream, mask=True)
    theirs = [
        bytes(f.data).decode() if f.opcode is Opcode.TEXT else bytes(f.data) for f in frames
    ]
    assert theirs == said == SmallFrames(limit=None).read(stream)[0]
