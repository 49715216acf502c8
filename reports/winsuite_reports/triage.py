"""Failure texts normalised and matched by similarity, as go.k8s.io/triage (kubernetes/test-infra triage/) does.

Normalising masks what differs between two failures of one cause: timestamps, UIDs, long hex strings, IP addresses,
durations, the random suffixes of generated names (pods, namespaces), and every other number. Two normalised texts
match when their edit distance is below a tenth of their mean length; triage's bucketed 4-gram counts give a cheap
lower bound of that distance, so the exact (banded) distance is computed only for candidates that can still match.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import zlib
from collections.abc import Iterable

LONG_TEXT = 10_000  # triage's longOutputLen: longer texts lose repeated lines, then their middle
TRUNCATED = "\n...[truncated]...\n"
SIMILARITY = 0.10  # texts match when fewer than this share of their mean length is edited
NGRAM_BUCKETS = 64

# Placeholders: upper-case words the later patterns do not match again.
TIME, UID, HEX, IP, DURATION, RANDOM, NUMBER = "TIME", "UID", "HEX", "IP", "DURATION", "ID", "N"

_TIMES = re.compile(
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?: [+-]\d{4})?(?: [A-Z]{2,5}\b)?"  # RFC 3339
    r"|[A-Z][a-z]{2}, \d+ \w+ \d{4} [\d:.]+(?: [+-]\d{4}| [A-Z]{2,5}\b)?"  # RFC 1123
    r"|\b[A-Z][a-z]{2}\s+\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?"  # syslog, Go's Stamp
    r"|\b[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+"  # a klog header
    r"|\b\d\d:\d\d:\d\d(?:\.\d+)?\b"  # a time of day
)
_UIDS = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_HEXES = re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{12,}\b")  # pointers, container ids, digests
_IPV4 = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?(?![\w.])")
_IPV6_CANDIDATE = re.compile(r"(?<![\w:.])[0-9a-fA-F:]*:[0-9a-fA-F:]*:[0-9a-fA-F:]*(?!\w)")
_UNIT = r"(?:ns|us|µs|ms|s|m|h)"
_DURATIONS = re.compile(
    rf"(?<![\w.])\d+(?:\.\d+)?{_UNIT}(?:\d+(?:\.\d+)?{_UNIT})*(?!\w)"  # Go: 1m30.5s, 300ms
    r"|(?<![\w.])\d+(?:\.\d+)? ?(?:nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|secs?|mins?)\b"
)
_NAMES = re.compile(r"\b[a-z0-9]+(?:-[a-z0-9]+)+\b")  # DNS labels: where generated names have their suffixes
_NUMBERS = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?!\w)")
_GO_MAP = re.compile(r"map\[([^][]*)\]")
_REPEATED_LINES = re.compile(r"(?m)^(.*\n)\1+")
# Kubernetes' rand.String alphabet (generateName's 5 characters) and SafeEncodeString's (a pod-template-hash).
_RAND_ALPHABET = frozenset("bcdfghjklmnpqrstvwxz2456789")
_HASH_ALPHABET = frozenset("bcdfghjkmnpqrstvwxz2456789")
_HEX_DIGITS = frozenset("0123456789abcdef")


# Many failures of a big run say the same thing (one cause across many tests): each text is normalised once.
@functools.lru_cache(maxsize=256)
def normalize(text: str) -> str:
    """The failure text with what varies between occurrences of one failure masked (see the module docstring)."""
    text = _TIMES.sub(TIME, text)
    if "map[" in text:  # Go prints a map's entries in a random order
        text = _GO_MAP.sub(lambda m: "map[" + " ".join(sorted(m.group(1).split())) + "]", text)
    text = _UIDS.sub(UID, text)
    text = _HEXES.sub(HEX, text)
    text = _IPV4.sub(IP, text)
    if ":" in text:
        text = _IPV6_CANDIDATE.sub(_ipv6, text)
    text = _DURATIONS.sub(DURATION, text)
    text = _NAMES.sub(_generated_name, text)
    text = _NUMBERS.sub(NUMBER, text)
    if len(text) > LONG_TEXT:
        text = _REPEATED_LINES.sub(r"\1", text)
    if len(text) > LONG_TEXT:
        text = text[: LONG_TEXT // 2] + TRUNCATED + text[-LONG_TEXT // 2 :]
    return text


def _ipv6(match: re.Match[str]) -> str:
    found = match.group(0)
    address, colon = (found[:-1], ":") if found.endswith(":") and not found.endswith("::") else (found, "")
    try:
        ipaddress.IPv6Address(address)
    except ValueError:
        return found
    return IP + colon


def _generated_name(match: re.Match[str]) -> str:
    """A DNS label with its random segments (after the first) masked, runs of them as one: pod-7d9f8c6b5-x2k4q and
    e2e-pods-1a2b3c read pod-ID and e2e-pods-ID."""
    segments = match.group(0).split("-")
    kept = segments[:1]
    for segment in segments[1:]:
        if _is_random(segment):
            if kept[-1] != RANDOM:
                kept.append(RANDOM)
        else:
            kept.append(segment)
    return "-".join(kept)


def _is_random(segment: str) -> bool:
    chars = frozenset(segment)
    if len(segment) == 5 and chars <= _RAND_ALPHABET:  # generateName's suffix
        return True
    if 8 <= len(segment) <= 10 and chars <= _HASH_ALPHABET and not segment.isalpha():  # a pod-template-hash
        return True
    # a hex token (secrets.token_hex, a short id) mixing digits and letters
    return len(segment) >= 4 and chars <= _HEX_DIGITS and not segment.isdigit() and not segment.isalpha()


_NGRAMS: dict[str, tuple[int, ...]] = {}
_NGRAMS_LIMIT = 50_000


def ngram_counts(text: str) -> tuple[int, ...]:
    """How many of the text's 4-grams fall in each of 64 buckets (by CRC-32), memoised: a constant-size profile."""
    found = _NGRAMS.get(text)
    if found is None:
        counts = [0] * NGRAM_BUCKETS
        data = text.encode()
        for start in range(len(data) - 3):
            counts[zlib.crc32(data[start : start + 4]) & (NGRAM_BUCKETS - 1)] += 1
        if len(_NGRAMS) >= _NGRAMS_LIMIT:
            _NGRAMS.clear()
        found = _NGRAMS[text] = tuple(counts)
    return found


def ngram_distance(a: str, b: str) -> int:
    """A lower bound of the edit distance: one edit changes at most four 4-grams."""
    return sum(abs(x - y) for x, y in zip(ngram_counts(a), ngram_counts(b), strict=True)) // 4


def edit_distance(a: str, b: str, limit: int) -> int:
    """The Levenshtein distance of `a` and `b` when it is at most `limit`, else `limit + 1`.

    Only the diagonal band of width 2 * limit + 1 is computed (Ukkonen), after the common prefix and suffix are
    set aside: two normalised failures of one cause differ in a few places."""
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    a, b = a[start:], b[start:]
    end = 0
    while end < len(a) and end < len(b) and a[-1 - end] == b[-1 - end]:
        end += 1
    if end:
        a, b = a[:-end], b[:-end]
    if len(a) > len(b):
        a, b = b, a
    if len(b) - len(a) > limit:
        return limit + 1
    if not a:
        return len(b)
    beyond = limit + 1
    previous = [j if j <= limit else beyond for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        low, high = max(1, i - limit), min(len(b), i + limit)
        current = [beyond] * (len(b) + 1)
        current[0] = i if i <= limit else beyond
        best = current[0] if low == 1 else beyond
        char = a[i - 1]
        for j in range(low, high + 1):
            cost = previous[j - 1] + (char != b[j - 1])
            cost = min(cost, previous[j] + 1, current[j - 1] + 1)
            current[j] = cost if cost <= limit else beyond
            best = min(best, current[j])
        if best > limit:
            return beyond
        previous = current
    return min(previous[len(b)], beyond)


def find_match(text: str, candidates: Iterable[str]) -> str | None:
    """The candidate `text` is close enough to: itself when it is one, else as triage's find_match decides,
    candidates tried nearest first by the 4-gram bound, one matching when its edit distance is below a tenth of the
    two texts' mean length."""
    candidates = list(candidates)
    if text in candidates:
        return text
    for bound, other in sorted((ngram_distance(text, other), other) for other in candidates):
        limit = int((len(text) + len(other)) / 2 * SIMILARITY)
        if bound > limit:
            continue
        if limit <= 1 and other != text:  # too short to differ at all
            continue
        if edit_distance(text, other, limit) < limit:
            return other
    return None
