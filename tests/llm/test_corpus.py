"""The augmented SFT corpus (trainers.llm.recipe.corpus) and the tokenizer's handling of copied values."""

from __future__ import annotations

import json
import random
import re

from agentgym_envs.scenarios.customer_support import phrasings as P
from agentgym_envs.scenarios.math.problems import question_numbers
from agentgym_envs.scenarios.math.templates import NAMES
from trainers.llm.recipe import corpus


def test_augmented_tasks_never_use_test_split_pools():
    test_words = set(NAMES["test"]) | set(P.FIRST_NAMES["test"]) | set(P.LAST_NAMES["test"]) | set(P.PLANS["test"])
    for task in corpus.math_tasks(300, seed=1):
        assert not test_words & set(re.findall(r"\w+", task["question"]))
        assert task["template"].startswith("train-")
    low, high = P.ID_RANGES["test"]
    for task in corpus.support_tasks(300, seed=1):
        customer = task["customer"]
        first, last = customer["name"].split()
        assert first not in P.FIRST_NAMES["test"] and last not in P.LAST_NAMES["test"]
        assert customer["email"].split("@")[1] not in P.EMAIL_DOMAINS["test"]
        assert customer["plan"] not in P.PLANS["test"]
        ids = [customer["user_id"][1:]] + [invoice["invoice_id"].removeprefix("INV-") for invoice in task["invoices"]]
        assert not any(len(i) == 5 and low <= int(i) <= high for i in ids)
        assert not any(invoice["date"][:7] in P.MONTHS["test"] for invoice in task["invoices"])
        shown = task["text"] + " ".join(task["logs"])
        for pool in (P.ENDPOINTS["test"], P.MIGRATION_SOURCES["test"], P.EMAIL_DOMAINS["test"]):
            assert not any(value in shown for value in pool)


def test_augmentation_is_deterministic_per_seed():
    assert corpus.math_tasks(50, seed=3) == corpus.math_tasks(50, seed=3)
    assert corpus.support_tasks(50, seed=3) == corpus.support_tasks(50, seed=3)
    assert corpus.support_tasks(50, seed=3) != corpus.support_tasks(50, seed=4)


def test_half_the_email_domains_end_in_a_word_no_list_holds():
    rng = random.Random(0)
    endings = [corpus.email(rng, "Ann", "Lee").rsplit(".", 1)[1] for _ in range(400)]
    uncommon = sum(ending not in corpus.TLDS for ending in endings)
    assert 150 <= uncommon <= 250
    assert max(map(len, endings)) > max(map(len, corpus.TLDS))


def test_math_numbers_span_one_to_four_digits():
    lengths = {len(str(n)) for task in corpus.math_tasks(200) for n in question_numbers(task["question"])}
    assert lengths == {1, 2, 3, 4}


def test_perturbation_keeps_every_placeholder():
    template = "Hi, this is {name} ({email}). I forgot my password for {plan}. Can you help?"
    vocabulary = corpus.train_vocabulary()
    rng = random.Random(0)
    heavy = corpus.Augment(drop=0.5, swap=0.5, insert=0.5, clean=0.0)
    texts = {corpus.perturb(template, vocabulary, rng, heavy) for _ in range(20)}
    assert len(texts) > 10
    for text in texts:
        assert all(p in text for p in ("{name}", "({email}).", "{plan}."))


def test_scrambled_wording_keeps_only_the_placeholders():
    template = "Hi, this is {name} ({email}). I forgot my password for {plan}. Can you help?"
    vocabulary = set(corpus.train_vocabulary())
    rng = random.Random(0)
    scrambled = corpus.perturb(template, sorted(vocabulary), rng, corpus.Augment(clean=0.0, scramble=1.0))
    words = scrambled.split(" ")
    assert [w for w in words if "{" in w] == ["{name}", "({email}).", "{plan}."]
    assert len(words) == len(template.split(" "))
    assert not vocabulary & {w for w in words if "{" not in w}


def test_word_problems_are_never_scrambled():
    tasks = corpus.math_tasks(120, augment=corpus.Augment(clean=0.0, scramble=1.0))
    hard = [task for task in tasks if task["difficulty"] == "hard"]
    assert hard and all(("cookies" in t["question"]) + ("dollars" in t["question"]) + ("pencils" in t["question"])
                        + ("liters" in t["question"]) >= 1 for t in hard)
    easy = [task for task in tasks if task["difficulty"] == "easy"]
    assert not any(w in task["question"] for task in easy for w in ("What", "Calculate", "Work", "Compute"))


def test_a_random_expression_shape_has_the_parentheses_precedence_needs_and_no_more():
    rng = random.Random(0)
    for _ in range(200):
        shape = corpus.random_shape(rng)
        names = re.findall(r"{(\w+)}", shape)
        assert 2 <= len(names) <= 4 and names == sorted(set(names))
        text = shape.format(**dict(zip(names, (13, 7, 5, 3))))
        value = eval(text)  # the test's own arithmetic on four literals
        for start in (i for i, c in enumerate(text) if c == "("):
            depth, end = 0, start
            for end in range(start, len(text)):
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                if depth == 0:
                    break
            assert eval(text[:start] + text[start + 1:end] + text[end + 1:]) != value, text


def test_half_the_easy_problems_show_a_random_shape_the_expert_copies():
    easy = [task for task in corpus.math_tasks(240, seed=2) if task["difficulty"] == "easy"]
    shaped = [task for task in easy if task["template"].endswith("-shape")]
    assert 0.3 < len(shaped) / len(easy) < 0.7
    assert all(task["expression"] == task["solution"] and task["expression"] in task["question"] for task in shaped)
    assert len({re.sub(r"\d+", "n", task["expression"]) for task in shaped}) > 10


def test_the_expert_solves_every_augmented_task(tmp_path):
    data = corpus.build_corpus(tmp_path, ["Math-v0", "CustomerSupport-v0"], episodes=40, seed=5)
    records = [json.loads(line) for line in data.read_text().splitlines()]
    assert len(records) == 80
    assert all(record["metrics"]["success"] == 1.0 for record in records)


def test_a_value_tokenizes_identically_in_prose_and_json(micro_model):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(micro_model))
    for value in ("bodhi.abernathy67@holdout.example", "u73418", "INV-60412", "Xochitl Fairweather", "612.5",
                  "(944 + 295) * (730 - 118)"):
        alone = tokenizer.encode(value)
        for context in (f"My email is {value}. Thanks", f'{{"email": "{value}"}}', f"Contact ({value})",
                        f"TICKET\n{value}"):
            ids = tokenizer.encode(context)
            assert any(ids[i: i + len(alone)] == alone for i in range(len(ids))), (value, context)


def test_an_email_address_is_one_token_per_character(micro_model):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(micro_model))
    address = "qwerty.zx-9@vobulak.example"
    pieces = [tokenizer.decode([i]) for i in tokenizer.encode(f"Reach me at {address}. Thanks")]
    start = pieces.index("q")
    assert pieces[start: start + len(address) + 1] == [*address, ". "]
    assert len(tokenizer.encode("reach")) < len("reach")  # ordinary words still merge


def test_copy_drills_ask_for_the_users_values_back():
    for drill in corpus.copy_drills(50, seed=2):
        user, assistant = drill["messages"]
        reply = assistant["content"]
        values = json.loads(reply).values() if reply.startswith("{") else reply.split("\n")
        assert all(str(int(v) if isinstance(v, float) else v) in user["content"] for v in values), drill
    assert corpus.copy_drills(20, seed=2) == corpus.copy_drills(20, seed=2)


def test_the_build_learns_copy_drills_before_the_episodes(micro_model):
    drills = [json.loads(line) for line in (micro_model / "copy_drills.jsonl").read_text().splitlines()]
    assert drills == corpus.copy_drills(len(drills), seed=0) and drills
    assert (micro_model / "sft_drills" / "model" / "model.safetensors").exists()
    episodes = [json.loads(line) for line in (micro_model / "expert_train.jsonl").read_text().splitlines()]
    assert all(record.get("tools") for record in episodes)
