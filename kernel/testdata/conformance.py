"""Jupyter's kernel conformance suite (Debian's python3-jupyter-kernel-test)
run against the evalcapsule Go kernel, with every test configured: none is
skipped for lack of a sample.

Run by TestConformance (kernel/jupyter_test.go) as
    JUPYTER_PATH=<prefix>/share/jupyter /usr/bin/python3 -m unittest -v conformance
from this directory; EVALCAPSULE_KERNEL_NAME names the kernelspec.
"""

import os
import unittest

import jupyter_kernel_test as jkt

DISPLAY = 'import "github.com/evalcapsule/evalcapsule/kernel/display"\n'


class GoKernelTests(jkt.KernelTests):
    kernel_name = os.environ.get("EVALCAPSULE_KERNEL_NAME", "evalcapsule-go")
    language_name = "go"
    file_extension = ".go"

    code_hello_world = 'import "fmt"\nfmt.Println("hello, world")'
    code_stderr = 'import ("fmt"; "os")\nfmt.Fprintln(os.Stderr, "oops")'

    # Completions replace the word after the last dot.
    completion_samples = [
        {"text": "fmt.Spr", "matches": {"Sprint", "Sprintf", "Sprintln"}},
        {"text": "import \"strings\"\nstrings.ToUpp", "matches": {"ToUpper", "ToUpperSpecial"}},
        {"text": "analysis.Unc", "matches": {"Uncertainties", "Uncertainty"}},
        {"text": "x := 1\nprintl", "matches": {"println"}},
    ]

    complete_code_samples = ["x := 1", "if true {\n}", 'fmt.Println("a")', "func f() {}"]
    incomplete_code_samples = ["func f() {", "x := []int{1,", "y := 1 +", "s := `raw"]
    invalid_code_samples = ["}", "x := )", '"unterminated']

    code_page_something = "fmt.Println?"

    code_generate_error = "undefinedThing()"

    code_execute_result = [
        {"code": "6 * 7", "result": "42"},
        {"code": '"a" + "b"', "result": "ab"},
        {"code": DISPLAY + 'display.HTML("<b>x</b>")', "mime": "text/html", "result": "<b>x</b>"},
    ]

    code_display_data = [
        {"code": DISPLAY + 'display.Show(display.HTML("<b>x</b>"))', "mime": "text/html"},
        {"code": DISPLAY + 'display.Show(display.Markdown("*x*"))', "mime": "text/markdown"},
        {
            "code": 'import ("image"; "image/color")\n'
            + DISPLAY
            + "img := image.NewGray(image.Rect(0, 0, 8, 8))\n"
            + "img.Set(2, 2, color.White)\n"
            + "display.Show(img)",
            "mime": "image/png",
        },
    ]

    # A glob that matches exactly one of code_execute_result's inputs.
    code_history_pattern = "6 [*] 7"
    supported_history_operations = ("tail", "range", "search")

    code_inspect_sample = "fmt.Println"

    code_clear_output = DISPLAY + "display.Clear()"


if __name__ == "__main__":
    unittest.main()
