# Reference for the IFEval differential test: lm-eval's check_following rules
# (lm_eval/tasks/ifeval/instructions.py, v0.4.1-v0.4.11) written out with
# Python's own re, str and json, which is what the Go code must agree with.
# Checks that need langdetect or nltk's punkt print "?" (not recomputable).
# Reads JSON lines {"doc": ..., "response": ...}; writes one line per case:
# strict and loose outcomes per instruction, T, F or ?.
import json
import re
import sys
from collections import Counter

UNKNOWN = object()


def count_words(text):
    return len(re.findall(r"\w+", text))


def rel(n, threshold, relation):
    return n < threshold if relation == "less than" else n >= threshold


def check(iid, kw, value):
    if iid == "keywords:existence":
        return all(re.search(k, value, flags=re.IGNORECASE) for k in sorted(kw["keywords"]))
    if iid == "keywords:frequency":
        n = len(re.findall(kw["keyword"].strip(), value, flags=re.IGNORECASE))
        return rel(n, kw["frequency"], kw["relation"])
    if iid == "keywords:forbidden_words":
        for w in sorted(set(kw["forbidden_words"])):
            if re.search(r"\b" + w + r"\b", value, flags=re.IGNORECASE):
                return False
        return True
    if iid == "keywords:letter_frequency":
        l = kw["letter"]
        assert len(l) == 1 and 97 <= ord(l.lower()) <= 122, "random letter"
        letters = Counter(value.lower())
        return rel(letters[kw["letter"].strip().lower()], kw["let_frequency"], kw["let_relation"])
    if iid in ("language:response_language", "length_constraints:number_sentences",
               "change_case:capital_word_frequency"):
        return UNKNOWN
    if iid == "length_constraints:number_paragraphs":
        ps = re.split(r"\s?\*\*\*\s?", value)
        n = len(ps)
        for i, p in enumerate(ps):
            if not p.strip():
                if i == 0 or i == len(ps) - 1:
                    n -= 1
                else:
                    return False
        return n == kw["num_paragraphs"]
    if iid == "length_constraints:number_words":
        return rel(count_words(value), kw["num_words"], kw["relation"])
    if iid == "length_constraints:nth_paragraph_first_word":
        ps = re.split(r"\n\n", value)
        n = len(ps)
        for p in ps:
            if not p.strip():
                n -= 1
        nth = kw["nth_paragraph"]
        if nth <= n:
            p = ps[nth - 1].strip()
            if not p:
                return False
        else:
            return False
        word = p.split()[0].strip().lstrip("'").lstrip('"')
        first = ""
        for ch in word:
            if ch in {".", ",", "?", "!", "'", '"'}:
                break
            first += ch.lower()
        return n == kw["num_paragraphs"] and first == kw["first_word"].lower()
    if iid == "detectable_content:number_placeholders":
        return len(re.findall(r"\[.*?\]", value)) >= kw["num_placeholders"]
    if iid == "detectable_content:postscript":
        value = value.lower()
        m = kw["postscript_marker"].strip()
        if m == "P.P.S":
            pat = r"\s*p\.\s?p\.\s?s.*$"
        elif m == "P.S.":
            pat = r"\s*p\.\s?s\..*$"
        else:
            pat = r"\s*" + m.lower() + r".*$"
        return bool(re.findall(pat, value, flags=re.MULTILINE))
    if iid == "detectable_format:number_bullet_lists":
        a = re.findall(r"^\s*\*[^\*].*$", value, flags=re.MULTILINE)
        b = re.findall(r"^\s*-.*$", value, flags=re.MULTILINE)
        return len(a) + len(b) == kw["num_bullets"]
    if iid == "detectable_format:constrained_response":
        value = value.strip()
        return any(o in value for o in ("My answer is yes.", "My answer is no.", "My answer is maybe."))
    if iid == "detectable_format:number_highlighted_sections":
        n = 0
        for h in re.findall(r"\*[^\n\*]*\*", value):
            if h.strip("*").strip():
                n += 1
        for h in re.findall(r"\*\*[^\n\*]*\*\*", value):
            if h.removeprefix("**").removesuffix("**").strip():
                n += 1
        return n >= kw["num_highlights"]
    if iid == "detectable_format:multiple_sections":
        pat = r"\s?" + kw["section_spliter"].strip() + r"\s?\d+\s?"
        return len(re.split(pat, value)) - 1 >= kw["num_sections"]
    if iid == "detectable_format:json_format":
        value = (value.strip().removeprefix("```json").removeprefix("```Json")
                 .removeprefix("```JSON").removeprefix("```").removesuffix("```").strip())
        try:
            json.loads(value)
        except ValueError:
            return False
        return True
    if iid == "detectable_format:title":
        return any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", value))
    if iid == "combination:two_responses":
        valid = []
        rs = value.split("******")
        for i, r in enumerate(rs):
            if not r.strip():
                if i != 0 and i != len(rs) - 1:
                    return False
            else:
                valid.append(r)
        return len(valid) == 2 and valid[0].strip() != valid[1].strip()
    if iid == "combination:repeat_prompt":
        return value.strip().lower().startswith(kw["prompt_to_repeat"].strip().lower())
    if iid == "startend:end_checker":
        return value.strip().strip('"').lower().endswith(kw["end_phrase"].strip().lower())
    if iid == "startend:quotation":
        value = value.strip()
        return len(value) > 1 and value[0] == '"' and value[-1] == '"'
    if iid == "change_case:english_capital":
        return UNKNOWN if value.isupper() else False
    if iid == "change_case:english_lowercase":
        return UNKNOWN if value.islower() else False
    if iid == "punctuation:no_comma":
        return not re.search(r"\,", value)
    raise KeyError(iid)


def variants(response):
    r = response.split("\n")
    first = "\n".join(r[1:]).strip()
    last = "\n".join(r[:-1]).strip()
    both = "\n".join(r[1:-1]).strip()
    return [response, response.replace("*", ""), first, last, both,
            first.replace("*", ""), last.replace("*", ""), both.replace("*", "")]


def sym(v):
    return "?" if v is UNKNOWN else ("T" if v else "F")


for line in sys.stdin:
    case = json.loads(line)
    doc, response = case["doc"], case["response"]
    out = []
    for iid, kwargs in zip(doc["instruction_id_list"], doc["kwargs"]):
        kw = {k: v for k, v in kwargs.items() if v}
        strict = bool(response.strip()) and check(iid, kw, response)
        loose = False
        for r in variants(response):
            v = bool(r.strip()) and check(iid, kw, r)
            if v is UNKNOWN:
                loose = UNKNOWN
            elif v:
                loose = True
                break
        out.append(sym(strict) + sym(loose))
    print(" ".join(out))
