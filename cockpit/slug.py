"""Path-safe names from free text: the slug of a session folder and of a pattern file."""

from __future__ import annotations

import re
import unicodedata


def slugify(objective: str, limit: int = 40) -> str:
    """'Vectorize K loads (float4)!' -> 'vectorize-k-loads-float4'; path-safe, never empty."""
    ascii_text = unicodedata.normalize("NFKD", objective).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > limit:
            break
        slug = candidate
    return slug or (words[0][:limit] if words else "session")
