"""The secret-name rule: which environment variable names say they hold a secret.

One rule for the masker (their values masked as ``***``) and the start-up scrub (their values
out of omg's environment block before any child starts). It imports nothing but ``re``: the scrub
reads it in the image it then replaces, so what that image loads is start-up paid twice.
"""

from __future__ import annotations

import re

#: Names whose values are secrets, wherever they appear in the name.
SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret."""
    return SECRET_NAME.search(name) is not None
