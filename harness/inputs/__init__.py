"""Every derived case in one place: `variants/` (the families a check asks for by name,
declared in harness.spec.VARIANT_FAMILIES), `explore` (explore's edge values, attrs and
shapes over the declared domains, and their hypothesis strategy, so a failure shrinks),
`lod` (LoD edges), `production` (inputs and conditions never seen in a test run) and
`strategies` (hypothesis strategies, `falsify`; `--fuzz N` draws from them,
harness.executing.fuzz)."""
