"""Discord's documented limits on what a bot sends, checked the way the API checks them.

discord.py does not check these; Discord answers 400 "Invalid Form Body" (code 50035) with a
nested ``errors`` object. Pure functions: each returns a list of ``Violation`` (empty = fine).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CONTENT_MAX = 2000
EMBEDS_MAX = 10
EMBED_TITLE_MAX = 256
EMBED_DESCRIPTION_MAX = 4096
EMBED_FIELDS_MAX = 25
EMBED_FIELD_NAME_MAX = 256
EMBED_FIELD_VALUE_MAX = 1024
EMBED_FOOTER_MAX = 2048
EMBED_AUTHOR_NAME_MAX = 256
EMBED_TOTAL_MAX = 6000
ACTION_ROWS_MAX = 5
ROW_COMPONENTS_MAX = 5
CUSTOM_ID_MAX = 100
BUTTON_LABEL_MAX = 80
SELECT_OPTIONS_MAX = 25
CHOICES_MAX = 25
CHOICE_NAME_MAX = 100
CHOICE_VALUE_MAX = 100
#: The message flag that switches a message to "components v2" (layout components, no content).
IS_COMPONENTS_V2 = 1 << 15


@dataclass(frozen=True)
class Violation:
    path: tuple[str | int, ...]
    code: str
    message: str

    def __str__(self) -> str:
        return f"{'.'.join(map(str, self.path))}: {self.message}"


def _too_long(path: tuple[str | int, ...], value: Any, limit: int) -> list[Violation]:
    if isinstance(value, str) and len(value) > limit:
        return [Violation(path, "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")]
    return []


def check_embeds(embeds: Any) -> list[Violation]:
    if not embeds:
        return []
    if not isinstance(embeds, list):
        return [Violation(("embeds",), "BASE_TYPE_LIST", "Must be a list.")]
    out: list[Violation] = []
    if len(embeds) > EMBEDS_MAX:
        out.append(Violation(("embeds",), "BASE_TYPE_MAX_LENGTH", f"Must be {EMBEDS_MAX} or fewer in length."))
    total = 0
    for i, embed in enumerate(embeds):
        p: tuple[str | int, ...] = ("embeds", i)
        title = embed.get("title") or ""
        description = embed.get("description") or ""
        out += _too_long((*p, "title"), title, EMBED_TITLE_MAX)
        out += _too_long((*p, "description"), description, EMBED_DESCRIPTION_MAX)
        total += len(title) + len(description)
        fields = embed.get("fields") or []
        if len(fields) > EMBED_FIELDS_MAX:
            out.append(
                Violation((*p, "fields"), "BASE_TYPE_MAX_LENGTH", f"Must be {EMBED_FIELDS_MAX} or fewer in length.")
            )
        for j, fld in enumerate(fields):
            name, value = fld.get("name") or "", fld.get("value") or ""
            if not name or not value:
                out.append(Violation((*p, "fields", j), "BASE_TYPE_REQUIRED", "This field is required"))
            out += _too_long((*p, "fields", j, "name"), name, EMBED_FIELD_NAME_MAX)
            out += _too_long((*p, "fields", j, "value"), value, EMBED_FIELD_VALUE_MAX)
            total += len(name) + len(value)
        footer = (embed.get("footer") or {}).get("text") or ""
        out += _too_long((*p, "footer", "text"), footer, EMBED_FOOTER_MAX)
        author = (embed.get("author") or {}).get("name") or ""
        out += _too_long((*p, "author", "name"), author, EMBED_AUTHOR_NAME_MAX)
        total += len(footer) + len(author)
    if total > EMBED_TOTAL_MAX:
        out.append(
            Violation(("embeds",), "MAX_EMBED_SIZE_EXCEEDED", f"Embed size exceeds maximum size of {EMBED_TOTAL_MAX}")
        )
    return out


def check_components(components: Any, flags: int = 0) -> list[Violation]:
    if not components:
        return []
    out: list[Violation] = []
    if flags & IS_COMPONENTS_V2:
        return out  # layout components: not modelled beyond "it is a list"
    if len(components) > ACTION_ROWS_MAX:
        out.append(
            Violation(("components",), "BASE_TYPE_MAX_LENGTH", f"Must be {ACTION_ROWS_MAX} or fewer in length.")
        )
    for i, row in enumerate(components):
        p: tuple[str | int, ...] = ("components", i)
        if row.get("type") != 1:
            out.append(Violation((*p, "type"), "UNION_TYPE_CHOICES", "Top-level components must be action rows."))
            continue
        children = row.get("components") or []
        if not children:
            out.append(Violation((*p, "components"), "BASE_TYPE_MIN_LENGTH", "Must be 1 or more in length."))
        if len(children) > ROW_COMPONENTS_MAX:
            out.append(
                Violation(
                    (*p, "components"), "BASE_TYPE_MAX_LENGTH", f"Must be {ROW_COMPONENTS_MAX} or fewer in length."
                )
            )
        for j, comp in enumerate(children):
            q = (*p, "components", j)
            out += _too_long((*q, "custom_id"), comp.get("custom_id"), CUSTOM_ID_MAX)
            out += _too_long((*q, "label"), comp.get("label"), BUTTON_LABEL_MAX)
            link_or_premium = comp.get("style") in (5, 6)
            if comp.get("type") == 2 and not link_or_premium and not comp.get("custom_id"):
                out.append(Violation((*q, "custom_id"), "BASE_TYPE_REQUIRED", "This field is required"))
            if len(comp.get("options") or []) > SELECT_OPTIONS_MAX:
                out.append(
                    Violation(
                        (*q, "options"), "BASE_TYPE_MAX_LENGTH", f"Must be {SELECT_OPTIONS_MAX} or fewer in length."
                    )
                )
    return out


def check_message(body: dict[str, Any], *, require_something: bool = True) -> list[Violation]:
    """Limits on a message create/edit body (channel message, interaction response, follow-up)."""
    out: list[Violation] = []
    content = body.get("content")
    out += _too_long(("content",), content, CONTENT_MAX)
    flags = int(body.get("flags") or 0)
    out += check_embeds(body.get("embeds"))
    out += check_components(body.get("components"), flags)
    if require_something and not (
        content or body.get("embeds") or body.get("attachments") or body.get("components") or body.get("poll")
    ):
        out.append(Violation(("content",), "BASE_TYPE_REQUIRED", "Cannot send an empty message"))
    return out


def check_choices(choices: Any) -> list[Violation]:
    """Limits on an autocomplete answer (callback type 8)."""
    if not isinstance(choices, list):
        return [Violation(("choices",), "BASE_TYPE_LIST", "Must be a list.")]
    out: list[Violation] = []
    if len(choices) > CHOICES_MAX:
        out.append(Violation(("choices",), "BASE_TYPE_MAX_LENGTH", f"Must be {CHOICES_MAX} or fewer in length."))
    for i, choice in enumerate(choices):
        name = choice.get("name")
        if not isinstance(name, str) or not 1 <= len(name) <= CHOICE_NAME_MAX:
            message = f"Must be between 1 and {CHOICE_NAME_MAX} in length."
            out.append(Violation(("choices", i, "name"), "BASE_TYPE_BAD_LENGTH", message))
        value = choice.get("value")
        if isinstance(value, str) and len(value) > CHOICE_VALUE_MAX:
            out += _too_long(("choices", i, "value"), value, CHOICE_VALUE_MAX)
    return out


def errors_object(violations: list[Violation]) -> dict[str, Any]:
    """Discord's nested ``errors`` object: {"embeds": {"0": {"title": {"_errors": [...]}}}}."""
    root: dict[str, Any] = {}
    for v in violations:
        node = root
        for part in v.path:
            node = node.setdefault(str(part), {})
        node.setdefault("_errors", []).append({"code": v.code, "message": v.message})
    return root
