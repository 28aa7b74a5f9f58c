"""A stock desk: a customer asks how many of an item a store holds; the agent looks the item
up, reads the store's stock and answers. The scenario of docs/tutorial_scenario.md."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from agentgym_envs.core import (
    Arg,
    GeneratedTasks,
    Outcome,
    RewardConfig,
    Scenario,
    TaskFormatError,
    Tool,
    ToolCall,
    ToolError,
    ToolResult,
    ToolUseEnv,
)

ITEMS = {"red mug": "SKU-101", "blue kettle": "SKU-202", "green lamp": "SKU-303", "oak shelf": "SKU-404"}
STORES = ("Paris", "Oslo", "Lima")
PHRASINGS = {"train": "How many {item}s does the {store} store have in stock?",
             "test": "Could you check the {store} shop's stock of {item}s for me?"}


@dataclass(frozen=True)
class StockTask:
    task_id: str
    item: str
    store: str
    counts: tuple[tuple[str, str, int], ...]  # (sku, store, units) for every sku and store

    def units(self, sku: str, store: str) -> int:
        return next(n for s, st, n in self.counts if (s, st) == (sku, store))


def generate_task(split: str, index: int) -> StockTask:
    """A pure function of its arguments, as ``GeneratedTasks`` asks."""
    rng = random.Random(f"{split}-{index}")
    counts = tuple((sku, store, rng.randint(0, 40)) for sku in ITEMS.values() for store in STORES)
    return StockTask(f"{split}-{index}", rng.choice(list(ITEMS)), rng.choice(STORES), counts)


@dataclass
class StockWorld:
    """One episode's mutable state."""

    task: StockTask
    answered: int | None = None


def lookup_item(world: StockWorld, name: str) -> ToolResult:
    if name not in ITEMS:
        raise ToolError(f"no item called {name!r}")  # an error result, never an exception
    return ToolResult(f"{name}: {ITEMS[name]}", reveal=(("sku", ITEMS[name]),))


def stock_level(world: StockWorld, sku: str, store: str) -> ToolResult:
    if sku not in ITEMS.values():
        raise ToolError(f"unknown sku {sku!r}")
    units = world.task.units(sku, store)
    return ToolResult(f"{sku} in {store}: {units} units", reveal=(("number", units),))


def answer(world: StockWorld, units: int) -> str:
    world.answered = units
    return f"Answered {units}."


TOOLS = (
    Tool("lookup_item", "Find an item's SKU by its name.",
         (Arg("name", "string", "item", "The item's name."),), lookup_item),
    Tool("stock_level", "Units of a SKU in a store.",
         (Arg("sku", "string", "sku", "The SKU."), Arg("store", "string", "store", "The store.", enum=STORES)),
         stock_level),
    Tool("answer", "Tell the customer the number of units; ends the episode.",
         (Arg("units", "integer", "number", "The units in stock."),), answer, terminal=True, kind="write"),
)


class StockScenario(Scenario):
    name = "stock_desk"
    env_id = "MyOrg/StockDesk-v0"
    description = "Answer how many units of an item a store holds."
    tools = TOOLS
    max_turns = 6
    default_rewards = RewardConfig(success=1.0, failure=0.0, correct_call=0.1, incorrect_call=-0.1,
                                   token_efficiency=0.0, speed=0.0)
    instructions = "Look the item up, read the store's stock, then answer with the number of units."
    static_entities = (*(("item", name) for name in ITEMS), *(("store", s) for s in STORES))

    def task_source(self, split: str) -> GeneratedTasks:
        return GeneratedTasks(split, generate_task, self.splits)

    def task_from_dict(self, data: dict[str, Any]) -> StockTask:
        """A task file line: ``{"task_id": ..., "item": ..., "store": ..., "seed": 0}``."""
        if data.get("item") not in ITEMS or data.get("store") not in STORES:
            raise TaskFormatError("a task needs a known 'item' and 'store'")
        counts = generate_task("file", int(data.get("seed", 0))).counts  # the seed draws the stock
        return StockTask(str(data["task_id"]), data["item"], data["store"], counts)

    def new_world(self, task: StockTask) -> StockWorld:
        return StockWorld(task)

    def prompt(self, task: StockTask) -> str:
        phrasing = PHRASINGS["test" if task.task_id.startswith("test") else "train"]
        return "CUSTOMER\n" + phrasing.format(item=task.item, store=task.store)

    def initial_entities(self, task: StockTask) -> Iterable[tuple[str, Any]]:
        return ()  # items and stores are static; SKUs and numbers are revealed by the tools

    def plan(self, task: StockTask) -> list[ToolCall]:
        sku = ITEMS[task.item]
        return [ToolCall("lookup_item", {"name": task.item}),
                ToolCall("stock_level", {"sku": sku, "store": task.store}),
                ToolCall("answer", {"units": task.units(sku, task.store)})]

    def judge_call(self, task: StockTask, world: StockWorld, call: ToolCall) -> bool:
        return call.key in {step.key for step in self.plan(task)}

    def grade(self, task: StockTask, world: StockWorld) -> Outcome:
        expected = task.units(ITEMS[task.item], task.store)
        success = world.answered == expected
        return Outcome(success, float(success), f"answered {world.answered}, expected {expected}")

    def expert_call(self, task: StockTask, world: StockWorld, history: Sequence[ToolCall]) -> ToolCall:
        done = {call.key for call in history}
        return next(step for step in self.plan(task) if step.key not in done)


class StockDeskEnv(ToolUseEnv):
    """An agent answers a stock question with three tools (see docs/tutorial_scenario.md)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(StockScenario(), **kwargs)


if StockScenario.env_id not in gym.registry:
    gym.register(id=StockScenario.env_id, entry_point=StockDeskEnv)
