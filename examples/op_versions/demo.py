"""Op versions, upgraders and saved-program replay: what `opkit compat --programs` reports.

1. Train fit-a-line (examples/fit_a_line.py) and deploy it with the user's post-processing
   op `rescale` (release v1, rescale_op.py): save the inference model with a sample feed.
2. Change `rescale` three ways, each a release of its own (a separate registry, loaded by
   `--ops` in a fresh `opkit` process):
   a. v1 -> v2-documented: a new attr, documented by a checkpoint   -> compatible
   b. v2-documented -> v2-default: the new attr's default changes, no checkpoint, and the
      saved model (which predates the attr) now gives other numbers  -> breaking
   c. v1 -> v2-renamed: attr `scale` deleted (renamed `factor`) with an upgrader -> compatible;
      the same release without the upgrader                       -> breaking
3. Print what `opkit compat OLD.json NEW.json --programs models/` says about each.

    python examples/op_versions/demo.py [WORKDIR]
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path


HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

RELEASE_FILES = {
    "v1": "rescale_v1.py", "v2-documented": "rescale_v2_documented.py",
    "v2-default": "rescale_v2_default.py", "v2-renamed": "rescale_v2_renamed.py",
    "v2-renamed-no-upgrader": "rescale_v2_renamed_no_upgrader.py",
}
SCENARIOS = (   # (title, OLD release, NEW release)
    ("a. documented new attr", "v1", "v2-documented"),
    ("b. undocumented default change", "v2-documented", "v2-default"),
    ("c. deleted attr with an upgrader", "v1", "v2-renamed"),
    ("c'. the same deletion without the upgrader", "v1", "v2-renamed-no-upgrader"),
)


def opkit_cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "opkit", *args], capture_output=True,
                          text=True, check=False, cwd=cwd)


def train_and_save(model_dir: Path, epochs: int = 10) -> dict:
    """Train fit-a-line; save `rescale(fc(x))` (release v1 of rescale) with a sample."""
    import opkit
    import opkit.io
    from fit_a_line import make_data, train
    from rescale_op import register_release

    register_release("v1")
    trained = train(epochs=epochs, verbose=False)
    xs, _, _, _ = make_data()
    prog = opkit.Program()
    block = prog.global_block()
    x = block.create_var(name="x", shape=[-1, 13], dtype="float32", is_data=True)
    w = block.create_parameter("fc.w_0", shape=[13, 1])
    b = block.create_parameter("fc.b_0", shape=[1])
    h = block.append_op("mul", {"X": x, "Y": w}, {"Out": "fc.tmp_0"}).output("Out")[0]
    y = block.append_op("elementwise_add", {"X": h, "Y": b}, {"Out": "fc.tmp_1"},
                        {"axis": 1}).output("Out")[0]
    price = block.append_op("rescale", {"X": y}, {"Out": "price"},
                            {"scale": 1000.0, "shift": 250.0}).output("Out")[0]
    scope = opkit.Scope()
    scope.var("fc.w_0").get_tensor().set(trained["w"])
    scope.var("fc.b_0").get_tensor().set(trained["b"])
    exe = opkit.Executor(opkit.CPUPlace())
    sample = {"x": xs[:16]}
    opkit.io.save_inference_model(str(model_dir), ["x"], [price], exe, prog, scope=scope,
                                  sample_feed=sample)
    (pred,) = exe.run(prog, feed=sample, fetch_list=[price], scope=scope)
    return {"final_loss": trained["losses"][-1], "sample_prediction": pred[:3, 0].tolist()}


def run(workdir, fmt: str = "text", echo: bool = True) -> dict:
    """The whole scenario in `workdir`; returns {title: (exit code, output)}."""
    work = Path(workdir)
    models = work / "models"
    info = train_and_save(models / "fit_a_line")
    if echo:
        print(f"trained fit-a-line (final loss {info['final_loss']:.5f}); saved "
              f"{models / 'fit_a_line'} with release v1 of rescale and a sample of 16 rows")
    dumps = {}
    for release, file in RELEASE_FILES.items():
        dumps[release] = work / f"ops-{release}.json"
        done = opkit_cli("dump", "--ops", str(HERE / file), "-o", str(dumps[release]))
        if done.returncode != 0:
            raise RuntimeError(f"opkit dump --ops {file} failed: {done.stderr}")
    results = {}
    for title, old, new in SCENARIOS:
        args = ["compat", dumps[old].name, dumps[new].name, "--programs", models.name,
                "--ops", str(HERE / RELEASE_FILES[new]), "--format", fmt]
        done = opkit_cli(*args, cwd=work)
        results[title] = (done.returncode, done.stdout if done.returncode != 2 else done.stderr)
        if echo:
            print(f"\n=== {title}: opkit compat ops-{old}.json ops-{new}.json --programs "
                  f"models --ops {RELEASE_FILES[new]}  (exit {done.returncode})")
            print(results[title][1].rstrip())
    return results


if __name__ == "__main__":
    if len(sys.argv) > 1:
        run(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            run(tmp)
