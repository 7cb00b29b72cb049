"""`mapwatch webhook add <paper|direction> <url>`, `webhook list`, `webhook remove <id>`: webhooks
from the host (no Discord needed). The URL is read from the argument or, given as `-`, from
standard input (keeps it out of the shell history and the process list); it is never printed.
`mapwatch webhook key` prints the key that seals the URLs, for $MAPWATCH_WEBHOOK_KEY."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mapwatch.cli.options import ActionParser
from mapwatch.store.errors import EXIT_OK, EXIT_USAGE


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("webhook", help="send a paper's alerts or a direction's follows to a Discord or Slack webhook")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=ActionParser)
    add = actions.add_parser("add", help="add a webhook: a paper (id, URL or title) or a direction, and its URL")
    add.add_argument("target", help="a paper (arXiv id, arXiv or map URL, title) or a direction (name or slug)")
    add.add_argument("url", help="the webhook URL, or - to read it from standard input")
    add.set_defaults(func=cmd_add)
    ls = actions.add_parser("list", help="the webhooks, their targets and state (never their URLs)")
    ls.set_defaults(func=cmd_list)
    rm = actions.add_parser("remove", help="remove a webhook by its id")
    rm.add_argument("id", type=int)
    rm.set_defaults(func=cmd_remove)
    key = actions.add_parser("key", help="print the key that seals the webhook URLs, as MAPWATCH_WEBHOOK_KEY=…",
                             description="Print the database's webhook key as a MAPWATCH_WEBHOOK_KEY=… line, to "
                                         "keep where the service's secrets live: a database restored from its "
                                         "Litestream replica then keeps its webhooks (docs/operations.md). "
                                         "Exit 1 when there is no key.")
    key.set_defaults(func=cmd_key)


def _target(db: Any, target: str) -> tuple[str, str, str]:
    from mapwatch.store.errors import DirectionNotFound, PaperNotFound
    from mapwatch.store.ids import normalize_id
    from mapwatch.store.questions import queries

    if normalize_id(target) is None:
        try:
            d = queries.resolve_direction(db, target)
            return "direction", d.slug, f"direction {d.name}"
        except DirectionNotFound:
            pass
    try:
        p = queries.resolve_paper(db, target)
    except PaperNotFound:
        raise SystemExit(_usage(f"no paper or direction matches {target[:100]!r}")) from None
    return "paper", p.id, f"paper {p.id} ({p.title[:80]})"


def _usage(message: str) -> int:
    print(f"mapwatch webhook: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def cmd_add(args: argparse.Namespace) -> int:
    from mapwatch.store.clock import utc_now
    from mapwatch.store.database.db import open_db, require_db
    from mapwatch.store.environment import of_command
    from mapwatch.store.errors import BadOption
    from mapwatch.store.subscriptions import webhooks

    url = sys.stdin.readline().strip() if args.url == "-" else args.url
    try:
        hook = webhooks.parse_url(url, extra_bases=of_command(args).webhook_bases())
    except BadOption as e:
        return _usage(str(e))
    db = open_db(require_db(args.db))
    try:
        kind, target, shown = _target(db, args.target)
        w, new = webhooks.add_webhook(db, kind, target, hook, guild_id=None, created_by=None, now=utc_now())
    finally:
        db.close()
    print(f"Webhook {w.id} ({w.kind}, {w.url_hint}) {'now receives' if new else 'already receives'} {shown}.")
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    from mapwatch.store.database.db import open_db, require_db
    from mapwatch.store.subscriptions import webhooks

    db = open_db(require_db(args.db))
    try:
        hooks = webhooks.list_webhooks(db, every=True)
        waiting = webhooks.key_state(db)
    finally:
        db.close()
    if waiting:
        print(waiting)
    for h in hooks:
        state = f"disabled: {h.disabled_reason}" if h.disabled_reason else "enabled"
        print(f"{h.id}\t{h.kind}\t{h.url_hint}\t{h.target_kind} {h.target}\t{state}"
              + (f"\tlast failure: {h.last_failure}" if h.last_failure else "")
              + (f"\tno answer since {h.no_answer_since}" if h.no_answer_since and not h.disabled_reason else ""))
    if not hooks:
        print("No webhooks.")
    return EXIT_OK


def cmd_remove(args: argparse.Namespace) -> int:
    from mapwatch.store.database.db import open_db, require_db
    from mapwatch.store.subscriptions import webhooks

    db = open_db(require_db(args.db))
    try:
        gone = webhooks.remove_webhook(db, args.id, every=True)
    finally:
        db.close()
    if not gone:
        return _usage(f"no webhook {args.id}")
    print(f"Webhook {args.id} removed.")
    return EXIT_OK


def cmd_key(args: argparse.Namespace) -> int:
    from mapwatch.store import secret_box
    from mapwatch.store.database.db import require_db
    from mapwatch.store.errors import EXIT_REJECTED

    db_file = str(require_db(args.db))
    try:
        key = secret_box.load_key(db_file, create=False)
    except secret_box.SecretUnreadable as e:
        print(f"mapwatch webhook: {e}", file=sys.stderr)
        return EXIT_REJECTED
    print(f"{secret_box.KEY_ENV}={secret_box.encode_key(key)}")
    return EXIT_OK
