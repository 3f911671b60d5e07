"""The fixtures the website's test files share (a pytest plugin: ``pytest_plugins = ["site_fixtures"]``).

The site is built once per test session, by the same ``tools.site.build`` that
`make site` runs (about a minute: it runs every teachers' notebook and draws
every widget state), and one Chromium (conftest.py's) serves every browser test of the
session: tests/test_site.py reads what the site holds, tests/test_site_reading.py
reads it as a reader on a phone, by keyboard, in the dark and on paper would.
"""

import pytest


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    from conftest import need_node
    from tools.site import build

    need_node("the website's build indexes it for search")
    log = []
    built = build(tmp_path_factory.mktemp("site") / "site", log=log.append)
    built.log = log
    return built
