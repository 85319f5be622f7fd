# Reference for the leaderboard_math differential test: answer extraction
# and normalize_final_answer as lm_eval/tasks/leaderboard/math/utils.py
# documents them (v0.4.6-v0.4.11), run with Python's own re and str.
# Reads JSON strings, one a line; writes JSON [unnormalized, normalized].
import json
import re
import sys

INVALID_ANSWER = "[invalidanswer]"
SUBSTITUTIONS = [("an ", ""), ("a ", ""), (".$", "$"), ("\\$", ""), (r"\ ", ""), (" ", ""),
                 ("mbox", "text"), (",\\text{and}", ","), ("\\text{and}", ","), ("\\text{m}", "\\text{}")]
REMOVED_EXPRESSIONS = ["square", "ways", "integers", "dollars", "mph", "inches", "ft", "hours", "km",
                       "units", "\\ldots", "sue", "points", "feet", "minutes", "digits", "cents",
                       "degrees", "cm", "gm", "pounds", "meters", "meals", "edges", "students",
                       "childrentickets", "multiples", "\\text{s}", "\\text{.}", "\\text{\ns}",
                       "\\text{}^2", "\\text{}^3", "\\text{\n}", "\\text{}", r"\mathrm{th}",
                       r"^\circ", r"^{\circ}", r"\;", r",\!", "{,}", '"', "\\dots"]


def get_unnormalized_answer(text):
    text += "I hope it is correct."
    m = re.search(r"Final Answer: The final answer is(.*?). I hope it is correct.", text)
    return m.group(1).strip() if m else INVALID_ANSWER


def normalize_final_answer(a):
    a = a.split("=")[-1]
    for before, after in SUBSTITUTIONS:
        a = a.replace(before, after)
    for expr in REMOVED_EXPRESSIONS:
        a = a.replace(expr, "")
    a = re.sub(r"(.*?)(\$)(.*?)(\$)(.*)", "$\\3$", a)
    a = re.sub(r"(\\text\{)(.*?)(\})", "\\2", a)
    a = re.sub(r"(\\textbf\{)(.*?)(\})", "\\2", a)
    a = re.sub(r"(\\overline\{)(.*?)(\})", "\\2", a)
    a = re.sub(r"(\\boxed\{)(.*)(\})", "\\2", a)
    a = re.sub(r"(frac)([^{])(.)", "frac{\\2}{\\3}", a)
    a = re.sub(r"(sqrt)([^{])", "sqrt{\\2}", a)
    a = a.replace("$", "")
    if a.replace(",", "").isdigit():
        a = a.replace(",", "")
    return a


for line in sys.stdin:
    u = get_unnormalized_answer(json.loads(line))
    print(json.dumps([u, normalize_final_answer(u)]))
