"""Who may decide a gate: bots never; a graph's approvers alone when it names them; else writers."""

from __future__ import annotations

from collections.abc import Callable, Sequence

#: The author associations that can hold write access; the permission API confirms it.
MAY_WRITE = ("OWNER", "MEMBER", "COLLABORATOR")
WRITE_PERMISSIONS = ("admin", "maintain", "write")


def refusal(
    login: str,
    *,
    bot: bool,
    association: str | None,
    approvers: Sequence[str],
    permission: Callable[[str], str],
    needs: str = "deciding",
) -> str | None:
    """Why ``login`` may not decide, or None when they may.

    ``association`` None means GitHub already checked the user (a workflow_dispatch needs
    write access to start); ``permission`` is asked only when the association could write.
    ``needs``: what the refusal says needs write access.
    """
    if bot:
        return f"{login} is a bot account, and bots never decide gates"
    if approvers:
        if login.lower() in {a.lower() for a in approvers}:
            return None
        return f"{login} is not one of this graph's approvers ({', '.join(approvers)})"
    if association is None:
        return None
    if association not in MAY_WRITE:
        return (
            f"{login} is {association.lower().replace('_', ' ')} here (author association "
            f"{association}); {needs} needs write access to the repository"
        )
    held = permission(login)
    if held not in WRITE_PERMISSIONS:
        return f"{login} has {held} access to the repository; {needs} needs write access"
    return None
