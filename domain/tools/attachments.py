"""`sessions_spawn` attachments: decoded, bounded, named plainly. Pure.

The tool validates and decodes them here; the runtime materializes the files in the child's
workspace. Every refusal is an `AttachmentError` carrying the exact text the tool reports
(**[assumed]** texts: each names the violated limit).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Final

from pydantic import BaseModel, ConfigDict

from sessionwatch.domain.text import has_control_character
from sessionwatch.domain.tools.config import AttachmentSettings
from sessionwatch.domain.tools.ports import AttachmentFile

ATTACHMENTS_DISABLED: Final = "attachments are disabled"
_BASE64: Final = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_MAX_NAME_CHARS: Final = 255


class AttachmentError(ValueError):
    """An attachment the tool refuses; `str()` is the tool's `error` text."""


class DecodedAttachments(BaseModel):
    """The decoded files, in the order given, and their total size."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    files: tuple[AttachmentFile, ...]
    total_bytes: int


def _name(raw: object) -> str:
    """A plain file name: no path separator, not `.`/`..`, no control character, not blank."""
    if not isinstance(raw, str) or not raw.strip():
        raise AttachmentError("attachment name is required")
    name = raw.strip()
    plain = (
        "/" not in name
        and "\\" not in name
        and name not in {".", ".."}
        and not has_control_character(name)
        and len(name) <= _MAX_NAME_CHARS
    )
    if not plain:
        raise AttachmentError(f'attachment name "{name}" is invalid: use a plain file name')
    return name


def _decoded_base64(name: str, text: str, max_file_bytes: int) -> bytes:
    """Strict base64: its alphabet, padding only at the end, a length that is a multiple of 4.

    The decoded size is checked from the length before anything is decoded.
    """
    compact = text.strip()
    if len(compact) % 4 or _BASE64.fullmatch(compact) is None:
        raise AttachmentError(f'attachment "{name}" is not valid base64')
    padding = len(compact) - len(compact.rstrip("="))
    size = len(compact) // 4 * 3 - padding
    if size > max_file_bytes:
        raise AttachmentError(f'attachment "{name}" exceeds maxFileBytes ({size} > {max_file_bytes})')
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise AttachmentError(f'attachment "{name}" is not valid base64') from None


def _content(name: str, item: Mapping[str, object], max_file_bytes: int) -> bytes:
    content = item.get("content")
    if not isinstance(content, str):
        raise AttachmentError(f'attachment "{name}" needs a string content')
    encoding = item.get("encoding", "utf8")
    encoding = encoding.strip().lower() if isinstance(encoding, str) else encoding
    if encoding in {"utf8", "utf-8"}:
        data = content.encode("utf-8", "surrogatepass")
    elif encoding == "base64":
        data = _decoded_base64(name, content, max_file_bytes)
    else:
        raise AttachmentError(f'attachment "{name}" has an unsupported encoding (use utf8 or base64)')
    if len(data) > max_file_bytes:
        raise AttachmentError(f'attachment "{name}" exceeds maxFileBytes ({len(data)} > {max_file_bytes})')
    return data


def decode_attachments(raw: object, settings: AttachmentSettings) -> DecodedAttachments:
    """Validate and decode `attachments` (`[{name, content, encoding?}]`) against the limits.

    Raises:
        AttachmentError: disabled, malformed, or over `maxFiles`, `maxFileBytes` or `maxTotalBytes`.
    """
    if not settings.enabled:
        raise AttachmentError(ATTACHMENTS_DISABLED)
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise AttachmentError("attachments must be a list of {name, content} objects")
    if len(raw) > settings.max_files:
        raise AttachmentError(f"attachments exceed maxFiles ({len(raw)} > {settings.max_files})")
    files: list[AttachmentFile] = []
    total = 0
    for item in raw:
        if not isinstance(item, Mapping):
            raise AttachmentError("attachments must be a list of {name, content} objects")
        name = _name(item.get("name"))
        if any(existing.name == name for existing in files):
            raise AttachmentError(f'attachment name "{name}" is used twice')
        data = _content(name, item, settings.max_file_bytes)
        total += len(data)
        if total > settings.max_total_bytes:
            raise AttachmentError(f"attachments exceed maxTotalBytes ({total} > {settings.max_total_bytes})")
        files.append(AttachmentFile(name=name, content=data, sha256=hashlib.sha256(data).hexdigest()))
    return DecodedAttachments(files=tuple(files), total_bytes=total)
