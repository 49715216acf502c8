"""The Categories page's case rows, made as markup here: a big tab has a case per test, and a template loop over
a hundred thousand of them costs many times as much as joining strings."""

from __future__ import annotations

from markupsafe import Markup

from winsuite_reports.categories import CategoryResult
from winsuite_reports.formats import pct
from winsuite_reports.model import Status

# A status as the Newest column words it (NO_RESULT: "no result") and as a history span.
_WORD = {status: status.name.replace("_", " ").lower() for status in Status}
_SPAN = {status: f'<span class="s{status.value}" title="{status.name.lower()}"></span>' for status in Status}
_LINE = "\n"


def _escaped(text: str) -> str:
    """`text` escaped as markupsafe.escape does, as a plain string: a Markup object per case name costs more than
    the five replacements (a big tab has a case per test)."""
    return (text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;").replace("'", "&#39;")
            .replace('"', "&#34;"))


def case_rows(category: CategoryResult) -> Markup:
    """One table row per case: its tests (as the title), newest verdict, history and pass rate."""
    rows = []
    # Cases share their verdict lists (reports.categories): the columns after the name are made once per list.
    verdict_cells: dict[int, str] = {}
    for case in category.cases:
        tests, history = case.tests, case.history
        count = len(tests)
        if count == 1 and tests[0] == case.name:  # a test that is its own case: one name to escape
            name = _escaped(case.name)
            cell = f'<tr><td title="{name}">{name}'
        else:
            # Escaping is per character: escaping the joined names is escaping each of them.
            cell = (f'<tr><td title="{_escaped(_LINE.join(tests))}">{_escaped(case.name)}'
                    f' <span class="muted">({count} test{"s" if count != 1 else ""})</span>')
        rest = verdict_cells.get(id(history))
        if rest is None:
            latest = case.latest
            rest = verdict_cells[id(history)] = (
                f'</td>\n<td class="s{latest.value}">{_WORD[latest]}</td>\n'
                f'<td class="history">{"".join(map(_SPAN.__getitem__, history))}</td>\n'
                f'<td class="num">{pct(case.pass_rate)}</td></tr>\n')
        rows.append(cell + rest)
    return Markup("".join(rows))
