"""The ``-v1`` phrasing grammar: a ticket's text is an opener, a statement of the kind's problem
and a closing clause, each drawn from its split's own fragments.

The splits share no fragment, so no test opener, statement or closer is ever seen in training.
Openers and closers are common to every kind (they carry no kind's key word); statements are
the kind's own and keep its key word in every split (password, invoice, API, refund,
migration), so the text tells the kinds apart as -v0's phrasings do. Fragments are numbered
across the splits (train first, then validation, then test), so a fragment's number names it
in every split.

A phrasing unit is the kind plus one fragment triple (``"password_reset/s2-o1-c0"``) or one of
-v0's whole phrasings (``"password_reset/v0-test-1"``): -v0's train phrasings are train units
of -v1 and -v0's test phrasings test units, so -v1's test split keeps -v0's test phrasings.
Per kind: train 6 x 5 x 6 = 180 grammar units + 6 of -v0's, validation 2 x 3 x 2 = 12,
test 3 x 3 x 3 = 27 + 3 of -v0's.
"""

from __future__ import annotations

import functools
import itertools

from .phrasings import PHRASINGS

SPLITS = ("train", "validation", "test")

OPENERS: dict[str, tuple[str, ...]] = {
    "train": ("Hi.", "Hello support team.", "Hi there!", "Good morning.", "Hey, hoping you can help.",
              "Hello, quick question for you."),
    "validation": ("Good afternoon.", "Hello, hope you are well."),
    "test": ("Greetings.", "Good evening, support.", "Hi folks, I need a hand."),
}

CLOSERS: dict[str, tuple[str, ...]] = {
    "train": ("My email is {email}. Thanks, {name}", "Account: {email}. - {name}", "Login email {email}. Cheers, {name}",
              "You can reach me at {email}. {name}", "Thank you! {name} ({email})",
              "The account is registered to {email}. Best, {name}"),
    "validation": ("Registered under {email}. Many thanks, {name}", "Sign-in address: {email}. Warm regards, {name}"),
    "test": ("Contact address {email}. Sincerely, {name}", "I use {email} to sign in. Appreciate it, {name}",
             "Reply to {email}, please. Yours, {name}"),
}

STATEMENTS: dict[str, dict[str, tuple[str, ...]]] = {
    "password_reset": {
        "train": (
            "I forgot my password and can't log in anymore.",
            "I'm locked out of my account and need a password reset.",
            "The login page keeps rejecting my password.",
            "My password stopped working this morning; could you send me a reset link?",
            "I lost my password and can't get into my account.",
        ),
        "validation": (
            "I mistyped my password too many times and now I can't sign in.",
            "My old password no longer works after the holidays; please help me set a new one.",
            "Could you help me change my password? I can't remember it.",
        ),
        "test": (
            "I have no idea what my password is any more and the app won't let me in.",
            "Please send a link so I can choose a new password; the current one is lost.",
            "Signing in fails because I no longer know my password.",
        ),
    },
    "billing_inquiry": {
        "train": (
            "Can you send me a copy of my invoice for {month}?",
            "I need the invoice for my {plan} subscription from {month} for our accounting.",
            "There is a charge of {amount} on my card and I'd like the invoice for it.",
            "Could you email me my {month} invoice?",
            "Our finance team asks for a copy of the {plan} plan invoice.",
        ),
        "validation": (
            "Please forward the invoice covering {month} for our records.",
            "I can't find the invoice for the {amount} payment; could you resend it?",
            "Our auditors want the {plan} invoice issued in {month}.",
        ),
        "test": (
            "For bookkeeping I require the invoice dated {month}.",
            "Which service does the {amount} debit pay for? I'd like its invoice.",
            "Kindly share a PDF of the {plan} tier invoice.",
        ),
    },
    "api_integration": {
        "train": (
            "Our integration started failing with API errors on {endpoint}.",
            "API calls from our backend to {endpoint} have been failing since yesterday.",
            "Our app gets errors from the API on {endpoint}; what's going on?",
            "The API keeps returning errors for {endpoint}; please investigate.",
            "We can't reach {endpoint} through the API any more.",
        ),
        "validation": (
            "Every API request to {endpoint} has been failing for an hour.",
            "Our API client gets error responses from {endpoint}; can you look at the logs?",
            "Since this morning the API rejects our calls to {endpoint}.",
        ),
        "test": (
            "Requests against {endpoint} fail through the API; could you diagnose it?",
            "Our production API integration with {endpoint} is down.",
            "After our last deploy the API stopped answering our calls to {endpoint}.",
        ),
    },
    "refund_request": {
        "train": (
            "I was charged twice for my {plan} plan on {date} ({amount}); please refund the duplicate.",
            "My card shows two charges of {amount} on {date}; I'd like a refund for one of them.",
            "You billed me {amount} twice on {date}; please refund the extra charge.",
            "There's a double charge of {amount} on {date}. Refund one, please.",
            "I see a duplicate payment of {amount} on {date} for the {plan} plan and want a refund.",
        ),
        "validation": (
            "The {plan} plan was charged two times on {date}, {amount} each; I need a refund.",
            "Please refund the repeated {amount} payment from {date}.",
            "I got billed {amount} twice on {date} and would like a refund of the second charge.",
        ),
        "test": (
            "My statement lists the same {amount} debit two times on {date}; please refund the extra one.",
            "Billing mistake: the {plan} tier was collected twice ({amount}) on {date}. I'd like a refund.",
            "Could you refund the surplus payment of {amount} taken on {date}?",
        ),
    },
    "data_migration": {
        "train": (
            "Our data migration from {source} failed halfway and we need it finished before Monday.",
            "The migration of our {source} data keeps failing; can you help?",
            "We're moving from {source} and the migration job crashed.",
            "Our migration from {source} is stuck and data is missing.",
            "The {source} import failed with errors; we need the migration completed.",
        ),
        "validation": (
            "The migration job importing our {source} records timed out.",
            "Half of our tables never arrived in the migration from {source}.",
            "Could you rescue our migration from {source}? It stopped overnight.",
        ),
        "test": (
            "Transferring our records off {source} aborted midway; the migration needs assistance.",
            "We attempted a migration of our {source} dataset and the transfer job died.",
            "Switching platforms from {source} went wrong: the migration halted.",
        ),
    },
}

KEY_WORDS = {"password_reset": "password", "billing_inquiry": "invoice", "api_integration": "API",
             "refund_request": "refund", "data_migration": "migration"}
"""The word every statement of a kind holds, in every split."""


def _numbered(pools: dict[str, tuple[str, ...]], split: str) -> list[tuple[int, str]]:
    """``split``'s fragments of ``pools`` with their numbers across the splits."""
    start = sum(len(pools[s]) for s in SPLITS[: SPLITS.index(split)])
    return list(enumerate(pools[split], start))


@functools.cache
def phrasing_units(kind: str, split: str, version: int) -> tuple[tuple[str, str], ...]:
    """The phrasing units of ``kind`` in ``split`` at ``version``: ``(phrasing id, template)``
    pairs, the template's placeholders those of :mod:`.phrasings`. Version 0: -v0's whole
    phrasings (``v0-<split>-<i>``); version 1: the grammar's triples (``s<i>-o<j>-c<k>``), then
    -v0's phrasings of the split."""
    if split not in (SPLITS if version else ("train", "test")):
        raise ValueError(f"version {version} has no split {split!r}")
    whole = tuple((f"v0-{split}-{i}", text) for i, text in enumerate(PHRASINGS[kind].get(split, ())))
    if version == 0:
        return whole
    triples = itertools.product(_numbered(STATEMENTS[kind], split), _numbered(OPENERS, split), _numbered(CLOSERS, split))
    grammar = tuple((f"s{s}-o{o}-c{c}", f"{opener} {statement} {closer}")
                    for (s, statement), (o, opener), (c, closer) in triples)
    return grammar + whole
