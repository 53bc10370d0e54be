#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Differential test of samc's SAM 3 tokenizer against the official one on
random texts (the committed corpus is tests/data/tokenizer/corpus.jsonl; this
looks further, with a new seed each run if you like).

    cc ... -o build/clip_tokenize        (build line in tools/clip_tokenize.c)
    /usr/bin/python3 tools/tokenizer_difftest.py --sam3-src DIR --ftfy-src DIR \\
        [--bin build/clip_tokenize] [--n 20000] [--seed 1]

Texts come from families aimed at the hard parts: mojibake soups and layered
mis-decodings, HTML-reference soups, combining marks and Hangul jamo, Greek
sigma contexts, control characters and odd spaces, long BPE words, random
code points. Prints every mismatch (up to --show) and a summary; exits 1 on
any mismatch.
"""
import argparse
import html.entities
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tokenizer_corpus as corpus  # noqa: E402

CODECS = ["latin-1", "windows-1252", "windows-1251", "windows-1250", "windows-1253", "windows-1254",
          "windows-1257", "iso-8859-2", "mac_roman", "cp437", "cp850", "cp866", "koi8-r", "iso-8859-7"]
SEEDS = ["café", "naïve", "Straße", "“quoted”", "it’s", "—", "…", "€", "Москва", "Ελλάδα", "日本", "한국",
         "👍", "ç", "à la", "às", "fácil", "Łódź", "ğüş", "čšž", "ø", "Œ", "µ", "½", "°", "¿", "ā", "ķ", "•",
         "™", "🐶", "é", "ü", "ñ", "ß", "ô", "ã", "ê", "í", "ó", "ú"]


def moji(rng):
    parts = []
    for _ in range(rng.randint(1, 4)):
        s = rng.choice(SEEDS + corpus.WORDS[:50])
        for _ in range(rng.choice([1, 1, 1, 2])):
            b = s.encode("utf-8")
            s = b.decode(rng.choice(CODECS), errors="replace")
        if rng.random() < 0.2:
            s = s.replace("\xa0", " ")
        if rng.random() < 0.1:
            s = s.replace(rng.choice(s) if s else "x", "\ufffd")
        parts.append(s)
    return rng.choice([" ", "", "\n", ". "]).join(parts)


SOUP = ("ÂÃÄÅÆÇÈÉÊËÐÑÒÓÔÕÖØÙÚÛÜÝÞßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿ€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ"
        "¡¢£¤¥¦§¨©ª«¬®¯°±²³´µ¶·¸¹º»¼½¾¿×÷ВГРСвЂЃЄЅІЇЈЉЊЋЌЎЏёђѓєѕіїјљњћќўџҐґΒΓΞΟβ€āĄąĽľŁłŚśŞşŤťŹźŻż"
        "│┌┐┘├┤┬┼═║╔╗╚╝╠╣╦╩╬▀▄█▌▐░▒▓√≈‚Äìîïòôúùûπ°¢\x80\x81\x85\x8d\x90\x9d\x9f\xa0\xad aeo.,?!")


def soup(rng):
    return "".join(rng.choice(SOUP) for _ in range(rng.randint(1, 10)))


NAMES = list(html.entities.html5)


def html_soup(rng):
    out = []
    for _ in range(rng.randint(1, 5)):
        k = rng.random()
        if k < 0.3:
            n = rng.choice(NAMES)
            n = n.upper() if rng.random() < 0.3 else n
            n = n[:rng.randint(1, len(n))] if rng.random() < 0.3 else n
            out.append("&" + n + ("" if rng.random() < 0.5 else rng.choice(["x", ";", " ", "y;", "amp;"])))
        elif k < 0.6:
            num = rng.choice([rng.randint(0, 300), rng.randint(0, 0x110FFF), rng.randint(0xD700, 0xE000)])
            form = rng.choice(["&#%d", "&#x%x", "&#X%X", "&#%05d"]) % num
            out.append(form + rng.choice([";", "", "a;", " "]))
        elif k < 0.75:
            out.append("&amp;" * rng.randint(1, 3) + rng.choice(["lt;", "#39;", "amp;", "x"]))
        else:
            out.append(rng.choice(["&", "#", ";", "<", ">", "a", " ", "\n", "x", "1"]))
    return "".join(out)


MARKS = [0x300, 0x301, 0x302, 0x303, 0x308, 0x30A, 0x323, 0x327, 0x328, 0x331, 0x334, 0x338, 0x345, 0x34F,
         0x5B4, 0x5BC, 0x5C1, 0x64B, 0x651, 0x93C, 0x94D, 0x9BE, 0x9D7, 0xB3E, 0xBBE, 0xE48, 0x1DCE, 0x20D7,
         0x302A, 0x3099, 0x309A, 0xFE20, 0x1D165, 0x1D16D, 0x11F00]
BASES = "aeiouAEIOUcnsyzwklrgAOUΑΕΩωαιυеиaकखবকଓொကᄀ가각"


def combining(rng):
    s = []
    for _ in range(rng.randint(1, 6)):
        s.append(rng.choice(BASES))
        for _ in range(rng.randint(0, 3)):
            s.append(chr(rng.choice(MARKS)))
        if rng.random() < 0.2:
            s.append(chr(rng.randint(0x1161, 0x11C2)))
    return "".join(s)


def sigma(rng):
    pool = ["Σ", "Σ", "Α", "σ", "ς", "a", "'", ".", "\u0345", "\u00ad", "\u0301", " ", "1", "Ω", "ʰ", "ᾈ", ":",
            "\u200d", "İ", "Ⓐ", "ⅰ"]
    return "".join(rng.choice(pool) for _ in range(rng.randint(1, 8)))


def controls(rng):
    pool = ["\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u2028", "\u2029", "\u3000",
            "\u200b", "\ufeff", "\x1b[", "\x1b[1;2m", "m", "1", ";", "a", "dog", " ", "\x00", "\x7f", "\u202f",
            "\ud83d", "\udc36", "\U0001F436", "\ufffd", "<", "&amp;"]
    return "".join(rng.choice(pool) for _ in range(rng.randint(1, 10)))


def bpe_word(rng):
    alphabet = rng.choice(["ab", "abc", "aeiou", "thes", "ing", "0123", "!?.", "qwertyuiopasdfghjklzxcvbnm"])
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(20, 400)))


FAMILIES = [moji, soup, html_soup, combining, sigma, controls, bpe_word,
            lambda rng: corpus.random_unicode(rng, 1)[0]]


def run_official(args, texts_hex, src):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(texts_hex, f)
        tmp = f.name
    try:
        res = subprocess.run([sys.executable, corpus.__file__, "--sam3-src", args.sam3_src, "--ftfy-src", src,
                              "--worker", src, tmp], check=True, capture_output=True, text=True)
    finally:
        os.remove(tmp)
    return json.loads(res.stdout)


def run_samc(args, texts_hex, version):
    vocab = os.path.join(args.sam3_src, "sam3", "assets", "bpe_simple_vocab_16e6.txt.gz")
    res = subprocess.run([args.bin, vocab, version], input="\n".join(texts_hex) + "\n", check=True,
                         capture_output=True, text=True)
    return res.stdout.splitlines()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sam3-src", required=True)
    ap.add_argument("--ftfy-src", required=True, action="append")
    ap.add_argument("--bin", default="build/clip_tokenize")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=20)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    texts = [FAMILIES[i % len(FAMILIES)](rng) for i in range(args.n)]
    hexes = [t.encode("utf-8", "surrogatepass").hex() for t in texts]
    bad = 0
    for src in args.ftfy_src:
        off = run_official(args, hexes, src)
        ours = run_samc(args, hexes, off["version"])
        mism = 0
        for i, (rec, line) in enumerate(zip(off["results"], ours)):
            if "error" in rec:
                ok = line.startswith("ERR")
            else:
                ids = rec["ids"] + [0] * (corpus.CONTEXT - len(rec["ids"]))
                ok = line == " ".join(map(str, ids))
            if not ok:
                mism += 1
                if mism <= args.show:
                    print("ftfy %s, family %d: %s\n  official: %s\n  clean:    %r\n  samc:     %s"
                          % (off["version"], i % len(FAMILIES), ascii(texts[i]), rec.get("ids", rec.get("error")),
                             rec.get("clean"), line))
        print("ftfy %s: %d texts, %d mismatches" % (off["version"], len(texts), mism))
        bad += mism
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
