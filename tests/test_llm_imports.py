"""``import digest.llm`` (and its model catalog) does not load the openai client: it is
imported where a client is made (issue 16 point 4)."""

from __future__ import annotations

import subprocess
import sys


def test_the_llm_package_and_its_catalog_do_not_import_openai():
    code = ("import sys, digest.llm, digest.llm.catalog, digest.llm.runner; "
            "print('openai' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "False"


def test_openai_chat_is_still_reachable_from_the_package():
    from digest.llm import OpenAIChat
    from digest.llm.openai_chat import OpenAIChat as direct

    assert OpenAIChat is direct
