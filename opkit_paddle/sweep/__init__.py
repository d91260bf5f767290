"""The Paddle sweep's reading side: classifying every failure by cause (`triage`) and the
summary a Paddle maintainer reads (`report`, `python -m opkit_paddle.sweep.report`).
docs/paddle.md "The sweep's report"."""
