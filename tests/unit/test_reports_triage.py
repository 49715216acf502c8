"""Failure texts normalised and matched as go.k8s.io/triage does: what is masked, what is kept, and when two texts
are one failure."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from winsuite_reports.triage import LONG_TEXT
from winsuite_reports.triage import TRUNCATED
from winsuite_reports.triage import edit_distance
from winsuite_reports.triage import find_match
from winsuite_reports.triage import ngram_distance
from winsuite_reports.triage import normalize


@pytest.mark.parametrize(("text", "normalized"), [
    # timestamps: RFC 3339, Go's time.Time, klog's header, syslog's, a time of day
    ("at 2026-01-01T12:00:00Z and 2026-01-01T12:00:00.123456+01:00", "at TIME and TIME"),
    ("at 2026-01-01 12:00:00.123456789 +0000 UTC", "at TIME"),
    ("I0102 15:04:05.123456 kubelet", "TIME kubelet"),
    ("Jan  2 15:04:05 node started at 15:04:05.5", "TIME node started at TIME"),
    ("Mon, 02 Jan 2026 15:04:05 GMT", "TIME"),
    # UIDs, pointers, container ids and digests
    ("pod uid 3f2504e0-4f89-11d3-9a0c-0305e82c3301 gone", "pod uid UID gone"),
    ("at 0xc000123abc, container 9f86d081884c7d659a2feaa0c55ad015", "at HEX, container HEX"),
    ("image sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "image sha256:HEX"),
    # IP addresses, with their ports, v4 and v6
    ("dial tcp 10.244.1.42:8080: connect: connection refused", "dial tcp IP: connect: connection refused"),
    ('Get "https://[fd00::1]:6443/api": dial tcp fd00::1:6443: i/o timeout',
     'Get "https://[IP]:N/api": dial tcp IP: i/o timeout'),
    # durations: Go's, and in words
    ("timed out after 5m0.5s (poll 300ms, 1h2m3s)", "timed out after DURATION (poll DURATION, DURATION)"),
    ("no answer in 30 seconds, 2.5 minutes", "no answer in DURATION, DURATION"),
    # generated names: a Deployment's pod, generateName's suffix, winsuite's and e2e.test's namespaces
    ("pod web-7d9f8c6b5d-x2k4q in ns pods-should-run-1a2b3c", "pod web-ID in ns pods-should-run-ID"),
    ("namespace e2e-tests-pods-8842 pod agnhost-zt9wq", "namespace e2e-tests-pods-N pod agnhost-ID"),
    ("statefulset web-0 replica web-12", "statefulset web-N replica web-N"),
    # every other number
    ("expected 3 replicas, got 2. exit code 137.", "expected N replicas, got N. exit code N."),
    # Go maps print in random order: sorted
    ("labels map[zone:a app:web]", "labels map[app:web zone:a]"),
])
def test_what_varies_between_occurrences_is_masked(text: str, normalized: str) -> None:
    assert normalize(text) == normalized


@pytest.mark.parametrize("kept", [
    "kube-proxy on node coredns-config", "v1.36.3 and ltsc2022", "[sig-windows] Pods [Conformance]",
    "k8s.io/kubernetes/test/e2e", "http2 IPv4", "Error: add: foo-bar-baz",
])
def test_names_versions_and_words_are_kept(kept: str) -> None:
    assert normalize(kept) == kept


def test_a_long_text_loses_repeated_lines_then_its_middle() -> None:
    repeated = "same line\n" * 3000 + "the end\n"
    assert normalize(repeated) == "same line\nthe end\n"
    varied = "".join(f"line {chr(97 + i % 26)}{chr(97 + i // 26 % 26)}\n" for i in range(4000))
    normalized = normalize(varied)
    assert len(normalized) == LONG_TEXT + len(TRUNCATED)
    assert normalized.startswith(varied[:100]) and normalized.endswith(varied[-100:])


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other)))
        previous = current
    return previous[-1]


@settings(max_examples=300, deadline=None)
@given(a=st.text("abc", max_size=30), b=st.text("abc", max_size=30), limit=st.integers(0, 12))
def test_the_banded_distance_is_levenshtein_up_to_its_limit(a: str, b: str, limit: int) -> None:
    exact = levenshtein(a, b)
    assert edit_distance(a, b, limit) == (exact if exact <= limit else limit + 1)


@settings(max_examples=100, deadline=None)
@given(a=st.text("abcdef ", max_size=60), b=st.text("abcdef ", max_size=60))
def test_the_ngram_distance_never_exceeds_the_edit_distance(a: str, b: str) -> None:
    assert ngram_distance(a, b) <= levenshtein(a, b)


def test_a_text_matches_a_candidate_within_a_tenth_of_their_length() -> None:
    base = "pod web-ID was not Running within DURATION: phase Pending, last event FailedScheduling"
    near = base.replace("Pending", "Unknown")
    far = base.replace("FailedScheduling", "FailedMount")
    limit = len(base) // 10  # 8: both pairs have about the same mean length
    assert levenshtein(near, base) < limit <= levenshtein(far, base)
    assert find_match(near, [far, base]) == base
    assert find_match(far, [near, base]) is None


def test_the_nearest_candidate_is_taken() -> None:
    text = "expected N endpoints, found N in service svc-ID of namespace pods-ID"
    one_edit = text.replace("found", "fund")
    two_edits = text.replace("found", "fond").replace("svc", "sv")
    assert find_match(text, [two_edits, one_edit]) == one_edit


def test_short_texts_match_only_when_equal() -> None:
    assert find_match("Timeout", ["Timeout"]) == "Timeout"
    assert find_match("Timeout", ["Timeouts"]) is None
