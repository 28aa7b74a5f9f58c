"""Loading LiveCodeBench- and DeepCoder-shaped JSONL files, and rejecting malformed ones."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib

import pytest

from agentgym_envs.scenarios.coding.problems import ProblemFileError, load_problems_jsonl
from agentgym_envs.scenarios.coding.runner import FunctionTest, StdinTest, run_tests

LCB_STDIN = {
    "question_title": "Add",
    "question_content": "Read two integers and print their sum.",
    "platform": "atcoder",
    "question_id": "abc000_a",
    "difficulty": "easy",
    "starter_code": "",
    "public_test_cases": json.dumps([{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]),
    "private_test_cases": json.dumps([{"input": "-5 5\n", "output": "0\n", "testtype": "stdin"}]),
    "metadata": "{}",
}
LCB_FUNCTIONAL = {
    "question_content": "Return the maximum of nums plus k.",
    "question_id": "3000",
    "difficulty": "Medium",
    "starter_code": "class Solution:\n    def maxPlus(self, nums: List[int], k: int) -> int:\n        ",
    "public_test_cases": json.dumps([{"input": "[1, 5, 2]\n3", "output": "8", "testtype": "functional"}]),
    "private_test_cases": base64.b64encode(
        zlib.compress(
            pickle.dumps(json.dumps([{"input": "[-1]\n0", "output": "-1", "testtype": "functional"}]))
        )
    ).decode(),
    "metadata": json.dumps({"func_name": "maxPlus"}),
}
DEEPCODER_LIST = {
    "problem": "Print the input reversed.",
    "tests": json.dumps(
        [
            {"input": f"{word}\n", "output": f"{word[::-1]}\n", "type": "stdin_stdout"}
            for word in ("abc", "xy", "q")
        ]
    ),
}
DEEPCODER_TACO = {
    "problem": "Write double(x).",
    "tests": {"inputs": [[1], [2], [-3]], "outputs": [2, 4, -6], "fn_name": "double"},
    "uid": "taco-1",
}


def _write(tmp_path, *rows: object) -> str:
    path = tmp_path / "problems.jsonl"
    path.write_text("\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows) + "\n")
    return str(path)


def test_loads_livecodebench_rows(tmp_path):
    stdin_problem, function_problem = load_problems_jsonl(_write(tmp_path, LCB_STDIN, "", LCB_FUNCTIONAL))
    assert stdin_problem.id == "abc000_a" and stdin_problem.difficulty == "easy"
    assert stdin_problem.examples == (StdinTest("1 2\n", "3\n"),)
    assert stdin_problem.hidden == (StdinTest("-5 5\n", "0\n"),)
    assert stdin_problem.solution is None and stdin_problem.candidates == ()
    assert function_problem.difficulty == "medium" and function_problem.function == "maxPlus"
    assert function_problem.examples == (FunctionTest("maxPlus", ([1, 5, 2], 3), 8),)
    assert function_problem.hidden == (FunctionTest("maxPlus", ([-1], 0), -1),)  # decompressed
    assert "class Solution" in function_problem.prompt()


def test_loads_deepcoder_rows(tmp_path):
    listed, taco = load_problems_jsonl(_write(tmp_path, DEEPCODER_LIST, DEEPCODER_TACO))
    assert listed.id == "problems-1" and listed.difficulty == "unknown"
    assert [t.input for t in listed.examples] == ["abc\n", "xy\n"] and len(listed.hidden) == 1
    assert taco.id == "taco-1" and taco.function == "double"
    assert taco.tests == tuple(FunctionTest("double", (x,), 2 * x) for x in (1, 2, -3))


def test_external_problems_run_through_the_runner(tmp_path):
    stdin_problem, function_problem = load_problems_jsonl(_write(tmp_path, LCB_STDIN, LCB_FUNCTIONAL))
    add = run_tests("a, b = map(int, input().split())\nprint(a + b)", stdin_problem.tests)
    solution = "class Solution:\n    def maxPlus(self, nums, k):\n        return max(nums) + k\n"
    assert all(o.passed for o in add + run_tests(solution, function_problem.tests))


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("{not json", r"line 2: not valid JSON"),
        ("[1, 2]", r"line 2: expected a JSON object, got list"),
        ({"title": "x"}, r"line 2: neither 'question_content'"),
        (
            {**LCB_STDIN, "question_content": ""},
            r"line 2, field 'question_content': expected a non-empty string",
        ),
        ({**LCB_STDIN, "public_test_cases": "[{]"}, r"line 2, field 'public_test_cases': not valid JSON"),
        ({**LCB_STDIN, "private_test_cases": 7}, r"line 2, field 'private_test_cases': expected a list"),
        (
            {**LCB_STDIN, "public_test_cases": '[{"input": "1"}]'},
            r"field 'public_test_cases\[0\]': expected an object",
        ),
        (
            {**LCB_STDIN, "public_test_cases": [{"input": 1, "output": "1"}]},
            r"field 'public_test_cases\[0\].input'",
        ),
        (
            {**LCB_STDIN, "public_test_cases": [{"input": "", "output": "", "testtype": "x"}]},
            r"\[0\].testtype': unknown",
        ),
        (
            {**LCB_FUNCTIONAL, "metadata": "{}"},
            r"field 'public_test_cases\[0\]': a functional test needs a function",
        ),
        ({**LCB_FUNCTIONAL, "metadata": "{oops"}, r"line 2, field 'metadata': not valid JSON"),
        (
            {**LCB_STDIN, "public_test_cases": "[]", "private_test_cases": "[]"},
            r"line 2: problem 'abc000_a' has no tests",
        ),
        ({"problem": "p"}, r"line 2, field 'tests': missing"),
        (
            {"problem": "p", "tests": {"inputs": [1], "outputs": []}},
            r"field 'tests': expected \"inputs\" and \"outputs\"",
        ),
        (
            {**DEEPCODER_TACO, "tests": {"inputs": ["[1"], "outputs": [1], "fn_name": "f"}},
            r"'tests\[0\].input': not valid",
        ),
        (
            {
                "problem": "p",
                "tests": [{"input": "1", "output": "1"}, {"input": [1], "output": 1, "fn_name": "f"}],
            },
            r"line 2: problem 'problems-2': tests must be all stdin or all calls",
        ),
    ],
)
def test_malformed_lines_are_rejected_with_line_and_field(tmp_path, row, message):
    path = _write(tmp_path, LCB_STDIN, row)
    with pytest.raises(ProblemFileError, match=message):
        load_problems_jsonl(path)


def test_compressed_tests_never_run_pickled_code(tmp_path):
    ran = tmp_path / "ran"

    class Exploit:
        def __reduce__(self):
            return (os.mkdir, (str(ran),))  # a visible effect, were the pickle ever loaded

    payload = base64.b64encode(zlib.compress(pickle.dumps(Exploit()))).decode()
    with pytest.raises(ProblemFileError, match="line 1, field 'private_test_cases'"):
        load_problems_jsonl(_write(tmp_path, {**LCB_STDIN, "private_test_cases": payload}))
    assert not ran.exists()
