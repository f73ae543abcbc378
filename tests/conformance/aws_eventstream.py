"""AWS event-stream frames (application/vnd.amazon.eventstream), as Bedrock streams them.

ConverseStream and InvokeModelWithResponseStream answer 200 and then send binary frames:

    total length (4 bytes, big-endian) | headers length (4) | prelude CRC32 (4)
    headers | payload | message CRC32 (4, over everything before it)

each header being name length (1), name, value type (1; 7 = string), value length (2),
value. An event has `:message-type: event` and `:event-type` (messageStart,
contentBlockDelta, chunk, ...); an error inside the stream is a frame with
`:message-type: exception` and `:exception-type` (modelStreamErrorException,
throttlingException, ...), its payload `{"message": ...}`. botocore checks both CRCs and
raises EventStreamError for an exception frame. A scenario's stream event named `...Exception`
is sent as an exception frame, any other as an event; `then: cut` sends half a frame.
"""

from __future__ import annotations

import json
import struct
import zlib

CONTENT_TYPE = "application/vnd.amazon.eventstream"
STRING = 7


def _header(name: str, value: str) -> bytes:
    n, v = name.encode(), value.encode()
    return struct.pack("!B", len(n)) + n + struct.pack("!BH", STRING, len(v)) + v


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One frame with both CRCs."""
    encoded = b"".join(_header(k, v) for k, v in headers.items())
    prelude = struct.pack("!II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    prelude += struct.pack("!I", zlib.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack("!I", zlib.crc32(message))


def event_frame(name: str, data: object) -> bytes:
    """An event frame, or an exception frame when the member name ends in `Exception`."""
    payload = data.encode() if isinstance(data, str) else json.dumps(data).encode()
    kind = "exception" if name.endswith("Exception") else "event"
    return frame(
        {
            ":message-type": kind,
            f":{kind}-type": name,
            ":content-type": "application/json",
        },
        payload,
    )
