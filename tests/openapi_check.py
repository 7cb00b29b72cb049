"""Requests checked against Discord's OpenAPI description (github.com/discord/discord-api-spec).

tests/data/discord-openapi.json is the part of `specs/openapi.json` the bot's requests touch
(the request bodies of the command, interaction, webhook, channel, message and thread routes,
and every schema they reach; its `info` names the commit). Refresh it with
`python -m tests.openapi_check <openapi.json> <commit>`.

The validator covers the JSON Schema keywords that description uses (type, properties, required,
items, enum, const, lengths, bounds, oneOf/anyOf/allOf, additionalProperties, uniqueItems), with
two leniencies that match what Discord itself accepts: an integer may be sent as a decimal
string (discord.py sends permissions that way), and oneOf needs at least one match (the
description's unions overlap on null and on open objects).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

SPEC_PATH = Path(__file__).parent / "data" / "discord-openapi.json"
_spec: dict[str, Any] | None = None


def spec() -> dict[str, Any]:
    global _spec
    if _spec is None:
        _spec = json.loads(SPEC_PATH.read_text(encoding="utf-8"))
    return _spec


def _type_ok(value: Any, t: str) -> bool:
    if t == "null":
        return value is None
    if t == "boolean":
        return isinstance(value, bool)
    if t == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, str) and re.fullmatch(r"-?\d+", value) is not None)
    if t == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if t == "string":
        return isinstance(value, str)
    if t == "array":
        return isinstance(value, list)
    if t == "object":
        return isinstance(value, dict)
    return True


def errors(value: Any, schema: dict[str, Any], where: str = "$") -> list[str]:
    """Why `value` does not fit `schema` (empty: it fits)."""
    if "$ref" in schema:
        schema = spec()["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    out: list[str] = []
    types = schema.get("type")
    if types is not None:
        types = [types] if isinstance(types, str) else types
        if not any(_type_ok(value, t) for t in types):
            return [f"{where}: {type(value).__name__} is not {'/'.join(types)}"]
    if "const" in schema and value != schema["const"]:
        out.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} is not one of {schema['enum']}")
    for key in ("oneOf", "anyOf"):
        if key in schema and all(errors(value, s, where) for s in schema[key]):
            best = min((errors(value, s, where) for s in schema[key]), key=len)
            out.append(f"{where}: matches none of its {len(schema[key])} alternatives, e.g. {best[:3]}")
    for s in schema.get("allOf", []):
        out += errors(value, s, where)
    if isinstance(value, str) and not (types and "integer" in types and not isinstance(value, str)):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append(f"{where}: longer than {schema['maxLength']}")
        if "minLength" in schema and len(value) < schema["minLength"]:
            out.append(f"{where}: shorter than {schema['minLength']}")
    number = int(value) if isinstance(value, str) and types and "integer" in types else value
    if isinstance(number, int | float) and not isinstance(number, bool):
        if "minimum" in schema and number < schema["minimum"]:
            out.append(f"{where}: below {schema['minimum']}")
        if "maximum" in schema and number > schema["maximum"]:
            out.append(f"{where}: above {schema['maximum']}")
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{where}: more than {schema['maxItems']} items")
        if "minItems" in schema and len(value) < schema["minItems"]:
            out.append(f"{where}: fewer than {schema['minItems']} items")
        if schema.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
            out.append(f"{where}: items repeat")
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                out += errors(item, schema["items"], f"{where}[{i}]")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                out.append(f"{where}: {name} is required")
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            out.append(f"{where}: more than {schema['maxProperties']} properties")
        extra = schema.get("additionalProperties", True)
        for name, v in value.items():
            if name in props:
                out += errors(v, props[name], f"{where}.{name}")
            elif extra is False and props:
                out.append(f"{where}: unknown property {name}")
            elif isinstance(extra, dict):
                out += errors(v, extra, f"{where}.{name}")
    return out


def _operation(method: str, path: str) -> dict[str, Any] | None:
    for template, ops in spec()["paths"].items():
        pattern = re.sub(r"\\\{[a-z_]+\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path) and method.lower() in ops:
            return ops[method.lower()]
    return None


def request_errors(method: str, path: str, body: Any) -> list[str]:
    """Why a request body does not fit the description of its route ([] when it does, or when
    the route has no JSON body in the description)."""
    op = _operation(method, path.split("?", 1)[0])
    if op is None or body is None:
        return []
    content = op["requestBody"]["content"].get("application/json")
    return [f"{method} {path}: {e}" for e in errors(body, content["schema"])] if content else []


def covered(method: str, path: str) -> bool:
    return _operation(method, path.split("?", 1)[0]) is not None


def recorded_errors(requests: list[Any]) -> list[str]:
    """Every violation among a FakeDiscord's (or a loopback server's) recorded requests."""
    return [e for r in requests for e in request_errors(r.method, r.path, r.json)]


def extract(openapi: dict[str, Any], commit: str) -> dict[str, Any]:
    """The subset stored in tests/data/discord-openapi.json."""
    keep = re.compile(r"^/(applications/\{application_id\}(/guilds/\{guild_id\})?/commands(/\{command_id\})?$"
                      r"|interactions/|webhooks/\{webhook_id\}/\{webhook_token\}"
                      r"|channels/\{channel_id\}(/messages|/threads|$)|users/@me/channels$)")
    paths: dict[str, Any] = {}
    for p, ops in openapi["paths"].items():
        if keep.search(p):
            found = {m: {"requestBody": {"content": {k: v for k, v in op["requestBody"]["content"].items()
                                                     if k == "application/json"}}}
                     for m, op in ops.items() if m in ("put", "post", "patch") and "requestBody" in op}
            if found:
                paths[p] = found
    schemas = openapi["components"]["schemas"]
    need: set[str] = set()
    todo: list[Any] = [paths]
    while todo:
        o = todo.pop()
        if isinstance(o, dict):
            for k, v in o.items():
                if k == "$ref" and (name := v.rsplit("/", 1)[1]) not in need:
                    need.add(name)
                    todo.append(schemas[name])
                elif k != "$ref":
                    todo.append(v)
        elif isinstance(o, list):
            todo.extend(o)

    def strip(o: Any) -> Any:
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items()
                    if k not in ("description", "title", "x-discord-union") or not isinstance(v, str)}
        return [strip(v) for v in o] if isinstance(o, list) else o

    return {"openapi": openapi["openapi"], "paths": paths,
            "info": {"source": "github.com/discord/discord-api-spec specs/openapi.json", "commit": commit,
                     "version": openapi["info"].get("version")},
            "components": {"schemas": {k: strip(schemas[k]) for k in sorted(need)}}}


if __name__ == "__main__":
    SPEC_PATH.write_text(json.dumps(extract(json.loads(Path(sys.argv[1]).read_text()), sys.argv[2]),
                                    separators=(",", ":"), sort_keys=True), encoding="utf-8")
