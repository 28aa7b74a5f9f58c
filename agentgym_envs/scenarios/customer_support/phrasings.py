"""-v0's ticket phrasings, and the value pools, disjoint between the splits (train and test;
-v1's validation split draws from pools of its own, -v1's train and test from -v0's).

Placeholders: {name}, {email}, {plan}, {amount}, {date}, {month}, {endpoint}, {source}.
-v1's phrasings: :mod:`.grammar`.
"""

from __future__ import annotations

PHRASINGS: dict[str, dict[str, tuple[str, ...]]] = {
    "password_reset": {
        "train": (
            "Hi, this is {name} ({email}). I forgot my password and can't log in anymore. Can you help?",
            "Hello support, I'm locked out of my account. My login email is {email}. Please reset my password. - {name}",
            "I can't remember my password. Account email: {email}. Thanks, {name}",
            "{name} here. The login page keeps rejecting my password for {email}. I need to reset it.",
            "Please help me get back into my account ({email}); I lost my password. Regards, {name}",
            "My password stopped working this morning. Could you send me a reset? Email is {email}. {name}",
        ),
        "test": (
            "Good day. Signing in with {email} fails and I no longer know the passphrase. Kindly assist. {name}",
            "Locked out! The credentials for {email} are gone from my password manager. What now? ({name})",
            "Could someone help {name} regain access? Account address {email}, password forgotten.",
        ),
    },
    "billing_inquiry": {
        "train": (
            "Hi, I'm {name} ({email}). Can you send me a copy of my invoice for {month}?",
            "Hello, I need the invoice for my {plan} subscription from {month} for our accounting. Email: {email}. {name}",
            "There is a charge of {amount} on my card and I'd like the invoice for it. My email is {email}. - {name}",
            "Could you email me my {month} invoice? Account {email}. Thanks, {name}",
            "{name} here ({email}). What was the {amount} charge in {month}? Please send the invoice.",
            "Our finance team asks for a copy of the {plan} plan invoice. Login: {email}. {name}",
        ),
        "test": (
            "Greetings. For bookkeeping I require the statement covering {month}. Registered address: {email}. {name}",
            "Which service does the {amount} debit refer to? Please forward the corresponding bill. ({name}, {email})",
            "Requesting a duplicate of the billing document for the {plan} tier. Contact: {email}. Kind regards, {name}",
        ),
    },
    "api_integration": {
        "train": (
            "Hi, our integration started failing with errors on {endpoint}. Account {email}. Can you check? - {name}",
            "Hello, API calls from our backend to {endpoint} are failing since yesterday. My email is {email}. {name}",
            "{name} here ({email}). Our app gets errors from the API on {endpoint}. What's going on?",
            "The API keeps returning errors for {endpoint}. Please investigate. Account: {email}. {name}",
            "Our webhook sync with {endpoint} broke. Could you look at our logs? {email}, {name}",
            "We can't reach {endpoint} through the API any more. Email {email}. Thanks, {name}",
        ),
        "test": (
            "Urgent-ish: requests against {endpoint} come back with failures. Could you diagnose? {name} <{email}>",
            "Production integration down. Every call hitting {endpoint} is rejected. Registered contact {email}. {name}",
            "Since the last deploy our client cannot talk to {endpoint}. Please examine the account {email}. {name}",
        ),
    },
    "refund_request": {
        "train": (
            "Hi, I was charged twice for my {plan} plan on {date} ({amount}). Please refund the duplicate. {name}, {email}",
            "Hello, my card shows two charges of {amount} on {date}. I only have one {plan} subscription. Email {email}. - {name}",
            "{name} here ({email}). You billed me {amount} twice on {date}. I'd like my money back for the extra charge.",
            "Double charge on {date} for {amount}! Please refund one of them. Account {email}. {name}",
            "I see a duplicate payment of {amount} on {date} for the {plan} plan. Refund please. {email} / {name}",
            "Please refund the second {amount} charge from {date}. My login is {email}. Thanks, {name}",
        ),
        "test": (
            "My statement lists the same {amount} debit two times on {date}. Reverse the extra one, please. {name} ({email})",
            "Billing mistake: {plan} tier collected twice ({amount}) on {date}. Kindly reimburse. Contact {email}. {name}",
            "Could you return the surplus payment of {amount} taken on {date}? Registered address {email}. {name}",
        ),
    },
    "data_migration": {
        "train": (
            "Hi, our data migration from {source} failed halfway. We need our data moved before Monday. {name}, {email}",
            "Hello, the import of our {source} data keeps failing. Can you help migrate it? Account {email}. - {name}",
            "{name} here ({email}). We're moving from {source} and the migration job crashed. Please help.",
            "Our migration from {source} is stuck and data is missing. Email {email}. {name}",
            "The {source} import failed with errors; we need the migration completed. Login {email}. Thanks, {name}",
            "Please help us finish migrating from {source}; the job errored out. {email} / {name}",
        ),
        "test": (
            "Transferring our records off {source} aborted midway and tables are absent. Assistance needed. {name} <{email}>",
            "We attempted to bring our {source} dataset over; the transfer job died. Please take over. {email}, {name}",
            "Switching platforms from {source} went wrong: the import halted. Contact {email}. Regards, {name}",
        ),
    },
}

FIRST_NAMES = {
    "train": ("Alice", "Bruno", "Chen", "Dana", "Elif", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Liam",
              "Maya", "Nikos", "Olga", "Pedro", "Quinn", "Rosa", "Sven", "Tara"),
    "test": ("Ulla", "Viktor", "Wen", "Xochitl", "Yusuf", "Zora", "Anouk", "Bodhi", "Cyra", "Dmitri"),
    "validation": ("Amara", "Bjorn", "Celine", "Darius", "Esme", "Felix", "Greta", "Hamid"),
}
LAST_NAMES = {
    "train": ("Smith", "Garcia", "Nguyen", "Okafor", "Schmidt", "Rossi", "Kim", "Silva", "Novak", "Haddad",
              "Larsen", "Moreau", "Tanaka", "Costa", "Patel"),
    "test": ("Quispe", "Virtanen", "Abernathy", "Oyelaran", "Zhukov", "Fairweather", "Lindqvist", "Mbeki"),
    "validation": ("Kowalski", "Delacroix", "Osei", "Yamamoto", "Brennan", "Castillo"),
}
EMAIL_DOMAINS = {
    "train": ("example.com", "mail.test", "acme.io", "corp.example"),
    "test": ("holdout.example", "evalmail.test", "sample.org"),
    "validation": ("tuning.example", "devset.test", "select.org"),
}
PLANS = {
    "train": {"Starter": (19.0, 29.0), "Pro": (49.0, 59.0), "Business": (99.0, 149.0)},
    "test": {"Growth": (37.5, 44.5), "Scale": (212.5, 287.5), "Enterprise": (612.5, 845.5)},
    "validation": {"Team": (64.5, 72.5), "Premium": (159.5, 179.5), "Ultimate": (399.5, 449.5)},
}
MONTHS = {
    "train": ("2024-01", "2024-02", "2024-03", "2024-04", "2024-05", "2024-06"),
    "test": ("2025-07", "2025-08", "2025-09", "2025-10"),
    "validation": ("2024-09", "2024-10", "2024-11", "2024-12"),
}
ENDPOINTS = {
    "train": ("/v1/orders", "/v1/customers", "/v1/payments", "/v1/reports"),
    "test": ("/v2/shipments", "/v2/ledger", "/v2/webhooks"),
    "validation": ("/v3/inventory", "/v3/events", "/v3/accounts"),
}
MIGRATION_SOURCES = {
    "train": ("Zendesk", "Salesforce", "a CSV export", "HubSpot"),
    "test": ("Freshdesk", "an SQL dump", "Intercom"),
    "validation": ("Jira", "a JSON archive", "Pipedrive"),
}
ID_RANGES = {"train": (10_000, 59_999), "test": (60_000, 99_999), "validation": (100_000, 149_999)}
