"""The project's benchmarks: the suite (``python -m benchmarks.suite``), its page
(``python -m benchmarks.suite_report``), equal tuning (``benchmarks/tuning.py``), a user's own
algorithm under the suite's protocol (``python -m benchmarks.your_algorithm``), and the scripts
whose output is a result page. Run the modules from the repository root."""
