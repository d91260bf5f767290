"""Row helpers shared by blind-set op files (read by `opkit lint`, never imported)."""


def normalized_rows(a):
    a = a / a.sum(axis=-1, keepdims=True)
    return a
