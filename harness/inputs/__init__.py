"""Every derived case in one place: the inputs the harness makes from an author's case.

- `variants/`: the variant families a check asks for by name (`Check.variants`;
  `variants.VARIANTS`, declared in harness.spec.VARIANT_FAMILIES): layout, empty, extremal,
  kinks, repeated input, attr values, edge shapes;
- `explore`: exploration over the op's declared domains (`derive_cases`: the edge values,
  attrs and shapes `explore` always tries; `value_strategy`: the hypothesis strategy over
  the same domains, so a failing generated case shrinks);
- `lod`: LoD edge cases (empty sequences, an all-empty batch, two levels);
- `strategies`: hypothesis strategies for op cases (arrays, attrs, LoD tensors);
- `fuzz`: `--fuzz N`, hypothesis cases drawn around each OpTest with `reference()`.
"""
