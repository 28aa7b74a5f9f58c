"""The benchmark suite's parts, each with one job: :mod:`.plan` (presets, cells, settings hashes,
commands), :mod:`.llm_rows` (language models as evaluated-only rows), :mod:`.store` (the committed
files), :mod:`.runner` (running one cell, here or as a Ray task), :mod:`.sitting` (a sitting of a
table: the cells without a current row, run and written as they finish), :mod:`.stats` (rliable
statistics), :mod:`.contender` (a user's algorithm beside the committed baseline rows).
``python -m benchmarks.suite`` drives them; ``python -m benchmarks.suite_report`` writes the page
from the files alone; ``python -m benchmarks.your_algorithm`` runs a user's algorithm under the protocol."""
