"""The benchmark suite's parts, each with one job: :mod:`.plan` (presets, cells, settings hashes,
commands), :mod:`.store` (the committed files), :mod:`.runner` (running cells here or on Ray),
:mod:`.stats` (rliable statistics). ``python -m benchmarks.suite`` drives them; ``python -m benchmarks.suite_report``
writes the page from the files alone."""
