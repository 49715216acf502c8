"""The streaming testcase reader reads every JUnit file as ElementTree's whole tree reads it: the same rows, the same
plain passes, the same attempts, and a MalformedJunit for the same files."""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from winsuite_reports import junit
from winsuite_reports.junit import MalformedJunit
from winsuite_reports.junit import parse_guarded
from winsuite_reports.junit import read_testcases
from winsuite_reports.junit import row_key


def tree_reading(path: Path) -> junit.Testcases:
    """The file read through ElementTree's whole tree, testcase by testcase."""
    testcases = list(parse_guarded(path).iter("testcase"))
    return junit.Testcases([row_key(testcase.get("name", "")) for testcase in testcases],
                     [len(testcase) == 0 for testcase in testcases],
                     [junit._attempt(testcase) for testcase in testcases if len(testcase)])


def outcome(path: Path) -> junit.Testcases | str:
    try:
        return read_testcases(path)
    except MalformedJunit:
        return "malformed"


def expected(path: Path) -> junit.Testcases | str:
    try:
        return tree_reading(path)
    except MalformedJunit:
        return "malformed"


def messages(path: Path) -> tuple[str, str]:
    """What each reading says of a file it refuses."""
    said = []
    for reading in (read_testcases, tree_reading):
        with pytest.raises(MalformedJunit) as refused:
            reading(path)
        said.append(str(refused.value))
    return said[0], said[1]


DOCUMENTS = {
    "plain and failed": '<testsuites><testsuite><testcase name="[It] a"/><testcase name="b">'
                        '<failure message="m">body</failure></testcase></testsuite></testsuites>',
    "pretty printed": '<testsuites>\n  <testsuite>\n    <testcase name="a">\n    </testcase>\n'
                      '    <testcase name="b">\n      <skipped message="why"/>\n    </testcase>\n'
                      '  </testsuite>\n</testsuites>\n',
    "nested testcase": '<testsuite><testcase name="outer"><failure message="x"/><testcase name="inner">'
                       '<skipped message="s"/></testcase><system-err>err</system-err></testcase></testsuite>',
    "nested plain testcase": '<testsuite><testcase name="outer"><testcase name="inner"/></testcase></testsuite>',
    "testcases deep in a testcase": '<testsuite><testcase name="outer">lead<properties><testcase name="deep">'
                                    '<failure message="d"/></testcase></properties><testcase name="next"/>'
                                    '<testcase name="last"><skipped message="s"/></testcase></testcase>'
                                    '<testcase name="after"><error message="e"/></testcase></testsuite>',
    "testcase in properties": '<testsuite><properties><testcase name="odd"/></properties></testsuite>',
    "comment, CDATA, entities": '<testsuite><testcase name="a &amp; b"><failure message="&lt;m&gt;">one<!-- c -->'
                                'two<![CDATA[<three>]]>&#65;</failure></testcase></testsuite>',
    "processing instruction": '<?xml version="1.0"?><?pi x?><testsuite><testcase name="a"><?pi y?></testcase>'
                              '<testcase name="b"><?pi?><error message="e"/></testcase></testsuite>',
    "no name": '<testsuite><testcase><failure/></testcase><testcase/></testsuite>',
    "default namespace": '<testsuites xmlns="urn:x"><testcase name="a"/></testsuites>',
    "namespaced testcase": '<testsuite xmlns:n="urn:n"><n:testcase name="a"/><testcase name="b"/></testsuite>',
    "namespaced children": '<testsuite xmlns:n="urn:n"><testcase name="a"><n:failure message="x"/></testcase>'
                           '</testsuite>',
    "properties": '<testsuite><testcase name="a"><properties><property name="interrupted" value="true"/>'
                  '<property name="ran-on" value="n1 (linux)"/></properties><failure message="cut"/></testcase>'
                  '</testsuite>',
    "bare skip": '<testsuite><testcase name="a"><skipped/></testcase></testsuite>',
    "truncated": '<testsuites><testcase name="x">',
    "not junit": "<html><body><testcase name='x'/></body></html>",
    "empty": "",
    "junk after the root": '<testsuite/><testsuite/>',
    "undefined entity": '<testsuite><testcase name="&nope;"/></testsuite>',
    "bad encoding": '<?xml version="1.0" encoding="bogus-enc"?><testsuites/>',
}


@pytest.mark.parametrize("document", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_the_reader_reads_a_file_as_the_whole_tree_does(tmp_path: Path, document: str) -> None:
    path = tmp_path / "junit_01.xml"
    path.write_text(document, encoding="utf-8")
    assert outcome(path) == expected(path)
    if expected(path) == "malformed":
        streamed, whole_tree = messages(path)
        assert streamed == whole_tree


@pytest.mark.parametrize("encoding", ["utf-16", "iso-8859-1", "windows-1252"])
def test_the_reader_reads_other_encodings_as_the_whole_tree_does(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "junit_01.xml"
    path.write_bytes(f'<?xml version="1.0" encoding="{encoding}"?><testsuite><testcase name="caf\u00e9">'
                     '<failure message="\u00e9t\u00e9"/></testcase></testsuite>'.encode(encoding))
    assert outcome(path) == expected(path) != "malformed"


TAGS = st.sampled_from(["testcase", "testsuite", "properties", "property", "failure", "error", "skipped",
                        "system-out", "system-err", "other"])
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")) | st.sampled_from("\n\t <>&'\""),
               max_size=8)


@st.composite
def elements(draw: st.DrawFn, depth: int = 0) -> str:
    tag = draw(TAGS)
    attributes = "".join(f" {name}={quoteattr(draw(TEXT))}" for name in draw(
        st.lists(st.sampled_from(["name", "message", "value", "time"]), unique=True, max_size=3)))
    parts = [] if depth >= 4 else draw(st.lists(st.one_of(elements(depth + 1), TEXT.map(_escaped),
                                                          st.just("<!-- note -->")), max_size=4))
    return f"<{tag}{attributes}>{''.join(parts)}</{tag}>"


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(root=st.sampled_from(["testsuites", "testsuite"]), children=st.lists(elements(), max_size=5))
def test_any_junit_like_tree_is_read_as_the_whole_tree_reads_it(tmp_path: Path, root: str,
                                                                 children: list[str]) -> None:
    path = tmp_path / "junit_01.xml"
    path.write_text(f"<{root}>{''.join(children)}</{root}>", encoding="utf-8")
    assert outcome(path) == expected(path)
