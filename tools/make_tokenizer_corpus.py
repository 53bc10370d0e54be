#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Build the tokenizer parity corpus: official SAM 3 token ids for ~1,800 texts.

    /usr/bin/python3 tools/make_tokenizer_corpus.py --sam3-src /path/to/sam3 \\
        --ftfy-src /path/to/ftfy-6.1.1 [--ftfy-src /path/to/ftfy-6.3.1] [--out tests/data/tokenizer]

The official tokenizer (sam3/model/tokenizer_ve.py, SimpleTokenizer with
sam3/assets/bpe_simple_vocab_16e6.txt.gz, called as tok(text, context_length=32))
is imported from --sam3-src with the real ftfy of each --ftfy-src (each in its own
subprocess: two ftfy versions cannot share an interpreter). Only `iopath` is
stood in for (g_pathmgr.open = open). The first --ftfy-src gives "ids"; each
further version adds "ids_ftfy_<version>" on the lines where it differs.

Writes, in --out:
  corpus.jsonl       one JSON object per line: "cat" (category), "hex" (the
                     text's UTF-8 bytes, surrogates written as Python's
                     surrogatepass does), "text" (the same for
                     reading; Python's ascii() of it when it holds
                     lone surrogates, which JSON readers refuse), "ids" (the 32 ids less the trailing
                     padding zeros), "clean" (the official cleaned
                     text, for diagnosis), or "error" (the exception the
                     official code raises)
  unicode_props.txt  Python's and the regex module's view of every code point
                     that the C predicates must reproduce (see its header)
and the fuzz seeds fuzz/seeds/tokenizer/ and fuzz/seeds/tokenizer_vocab/ (--seeds).

Every string is built deterministically (fixed lists and a seeded PRNG).
"""
import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import types
import unicodedata

CONTEXT = 32


# ---------------------------------------------------------------------------
# The official tokenizer (worker side)
# ---------------------------------------------------------------------------

def load_official(sam3_src, ftfy_src):
    sys.path.insert(0, ftfy_src)
    import ftfy  # noqa: F401  (the real one, from ftfy_src)
    assert os.path.realpath(ftfy.__file__).startswith(os.path.realpath(ftfy_src)), ftfy.__file__
    if "iopath" not in sys.modules:  # stand-in: only g_pathmgr.open is used
        io_mod = types.ModuleType("iopath")
        common = types.ModuleType("iopath.common")
        file_io = types.ModuleType("iopath.common.file_io")
        file_io.g_pathmgr = types.SimpleNamespace(open=open)
        io_mod.common, common.file_io = common, file_io
        sys.modules.update({"iopath": io_mod, "iopath.common": common, "iopath.common.file_io": file_io})
    path = os.path.join(sam3_src, "sam3", "model", "tokenizer_ve.py")
    spec = importlib.util.spec_from_file_location("sam3_tokenizer_ve", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    vocab = os.path.join(sam3_src, "sam3", "assets", "bpe_simple_vocab_16e6.txt.gz")
    return mod.SimpleTokenizer(vocab), ftfy.__version__


def worker(sam3_src, ftfy_src, texts_file):
    tok, version = load_official(sam3_src, ftfy_src)
    texts = json.load(open(texts_file, encoding="utf-8"))
    out = []
    for hx in texts:
        text = bytes.fromhex(hx).decode("utf-8", "surrogatepass")
        rec = {}
        try:
            ids = tok(text, context_length=CONTEXT)[0].tolist()
            while ids and ids[-1] == 0:  # padding (a real 0, "!", is always followed by the end token)
                ids.pop()
            rec["ids"] = ids
            rec["clean"] = tok.clean_fn(text)
        except Exception as e:  # the official code raising is a result too
            rec["error"] = type(e).__name__
        out.append(rec)
    json.dump({"version": version, "results": out}, sys.stdout)


# ---------------------------------------------------------------------------
# The texts
# ---------------------------------------------------------------------------

WORDS = ("a dog|the cat|player in red|person|car|red car|blue sky|a man riding a horse|two people|bicycle|"
         "traffic light|stop sign|fire hydrant|umbrella|handbag|tie|suitcase|frisbee|skis|snowboard|"
         "sports ball|kite|baseball bat|baseball glove|skateboard|surfboard|tennis racket|bottle|wine glass|"
         "cup|fork|knife|spoon|bowl|banana|apple|sandwich|orange|broccoli|carrot|hot dog|pizza|donut|cake|"
         "chair|couch|potted plant|bed|dining table|toilet|tv|laptop|mouse|remote|keyboard|cell phone|"
         "microwave|oven|toaster|sink|refrigerator|book|clock|vase|scissors|teddy bear|hair drier|"
         "toothbrush|zebra|giraffe|elephant|bear|sheep|cow|bird|horse|airplane|bus|train|truck|boat|"
         "the leftmost person|the man in the white shirt|yellow school bus|striped shirt|wooden table|"
         "small white dog|big brown bear|woman holding an umbrella|child|children playing|"
         "a photo of a dog|grass|tree|trees|building|window|door|road|sidewalk|sky|cloud|water|sand|"
         "snow|mountain|rock|fence|pole|sign|wall|floor|ceiling|lamp|light|shadow|reflection|hand|face|"
         "head|hair|eye|eyes|nose|mouth|ear|arm|leg|foot|shoe|shoes|hat|cap|helmet|glasses|sunglasses|"
         "jacket|coat|dress|skirt|pants|jeans|shorts|sock|glove|bag|backpack|box|basket|ball|toy|phone|"
         "screen|monitor|camera|flag|banner|poster|painting|picture|frame|mirror|curtain|pillow|blanket|"
         "towel|rug|carpet|plate|glass|jar|pot|pan|stove|counter|shelf|cabinet|drawer|bench|stool|sofa|"
         "desk|bookshelf|plant|flower|flowers|leaf|leaves|branch|trunk|root|fruit|vegetable|bread|meat|"
         "fish|egg|cheese|milk|juice|coffee|tea|wine|beer|soda|candy|chocolate|cookie|pie|soup|salad|"
         "rice|noodles|pasta|burger|fries|taco|sushi|dumpling|antidisestablishmentarianism|"
         "supercalifragilisticexpialidocious|pneumonoultramicroscopicsilicovolcanoconiosis|"
         "xylophone|quizzical|jazzy|fjord|rhythm|syzygy|zzz|aaaaaaaa|abababab|mississippi|bookkeeper").split("|")

SENTENCES = [
    "A man is riding a horse on the beach at sunset.",
    "Two dogs are playing with a red ball in the park.",
    "The quick brown fox jumps over the lazy dog.",
    "Find all the cars that are parked on the left side of the street.",
    "Segment the person who is wearing a blue jacket and holding a coffee cup.",
    "What's in the picture? A cat, a dog, and three birds!",
    "Is this the real life? Is this just fantasy?",
    "object #3, next to the window (not the door)",
    "price: $12.99 (was $19.99) -- 35% off!!!",
    "email me at someone@example.com or visit https://example.org/path?q=1&x=2",
    "C:\\Users\\name\\file.txt and /usr/local/bin",
    "snake_case, camelCase, PascalCase, kebab-case, SCREAMING_CASE",
    "Hello, World! Hello, world! hello world",
    "I can't, you won't, they shouldn't, we'd've",
    "the 1st, 2nd, 3rd and 4th place winners",
    "temperature: -40°C = -40°F",
    "x^2 + y^2 = z^2; a*b/c - d%e",
    "#hashtag @mention $cashtag &ampersand",
    "   leading and trailing spaces   ",
    "MiXeD CaSe TeXt WiTh NuMbErS 123 AND SYMBOLS !@#",
]

PUNCT = ["wow!~", "!?", "!", "!!", "!!!", "?!", "?", "??", "...", "..", "…", "!a", "a!", "a!b", "!wow", "wow!",
         "~!", "!~", "!!~~", "(hello)", "[x]", "{y}", "<z>", "a.b.c", "a,b,c", "a;b:c", "\"quoted\"", "'single'",
         "'", "''", "'''", "-", "--", "---", "—", "–", "_", "__", "a_b", "@", "#", "$", "%", "^", "&", "*",
         "+", "=", "|", "\\", "/", "//", ":)", ":(", ";)", ":-)", "<3", "</3", "^_^", "o_O", "¯\\_(ツ)_/¯",
         "(╯°□°)╯︵ ┻━┻", "!@#$%^&*()", ".,;:!?", "?!?!?!", "!#", "!$", "!%", "!&", "!(", "!)", "!*", "!+",
         "!,", "!-", "!.", "!/", "!:", "!;", "!<", "!=", "!>", "!@", "![", "!]", "!^", "!_", "!`", "!{", "!|",
         "!}", "dog!!", "dog!?", "dog?!", "cat...", "cat…", "¡hola!", "¿qué?", "«guillemets»", "‹single›",
         "„German“", "「Japanese」", "『double』", "【bracket】", "•bullet", "·middle", "§5", "¶", "†", "‡",
         "©2024", "®", "™", "°", "±", "×", "÷", "µ", "¬", "¦", "¨", "¯", "´", "¸", "¤", "¢", "£", "¥", "€",
         "₹", "₽", "₩", "₪", "฿"]

NUMBERS = ["route 66", "0", "1", "42", "123", "1234567890", "3.14159", "1,000,000", "1e10", "0x1F", "2nd",
           "10x", "x10", "v2.0.1", "2024-01-31", "12:30", "50%", "$100", "#1", "no. 7", "007", "1/2", "3/4",
           "½", "¼", "¾", "²", "³", "¹", "x²", "Ⅻ", "ⅻ", "Ⅳ", "①", "⑩", "⓵", "٠١٢٣٤٥٦٧٨٩", "۱۲۳", "१२३",
           "১২৩", "๑๒๓", "一二三", "壹貳參", "１２３", "𝟏𝟐𝟑", "𝟙", "12abc34", "a1b2c3", "99 red balloons",
           "route66", "catch-22", "7-eleven", "4x4", "1080p", "3d", "5g", "mp3", "h2o", "co2", "b2b"]

CONTRACTIONS = ["DON'T", "It'S", "it's", "IT'S", "we'RE", "WE'RE", "I'M", "i'm", "you'LL", "YOU'LL", "he'D",
                "HE'D", "they'VE", "THEY'VE", "can't", "CAN'T", "won't", "isn't", "o'clock", "rock'n'roll",
                "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'VE", "'M", "'LL", "'D", "'x",
                "'sam", "'tis", "'reach", "dog's", "dogs'", "James's", "it’s", "IT’S", "don’t", "it‘s", "itʼs",
                "it's'", "''s", "'s's", "it'ſ", "'ſ", "IT'ſ", "A", "ABC", "Hello", "HELLO", "hElLo", "ÀÉÎÕÜ",
                "ÇA VA", "STRASSE", "STRAẞE", "İstanbul", "ISTANBUL", "ıi", "Iİıi", "ǅ", "ǈ", "ǋ", "ᾈ", "ΣΑΣ",
                "ΟΔΟΣ", "Σ", "ΑΣ.", "ΑΣ Α", "ΑΣ'Α", "ΑΣ\u0301", "Σ\u0301Α", "A\u0345Σ", "ΑΣΑ", "ὈΔΥΣΣΕΎΣ",
                "ΜΆΪΟΣ", "ΑΣ1", "1Σ", "aΣb", "aΣ", "ΣΣ", "ΑΣ\u00adΑ", "ΑΣ\u00ad", "ΣA"]

HTML = ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&nbsp;", "&copy;", "&reg;", "&trade;", "&hellip;",
        "&mdash;", "&ndash;", "&lsquo;", "&rsquo;", "&ldquo;", "&rdquo;", "&eacute;", "&Eacute;", "&EACUTE;",
        "&eAcute;", "&ntilde; &Ntilde; &NTILDE; &nTILDE;", "&szlig;", "&SZLIG;", "BUNDESSTRA&SZLIG;E",
        "P&EACUTE;REZ", "&amp", "&lt", "&gt", "&copy", "&AMP", "&LT", "&notit;", "&notin;", "&not", "&noti",
        "this&not that", "&ampfoo", "&amp;amp;", "&amp;lt;", "&amp;amp;lt;", "&amp;amp;amp;amp;lt;",
        "&amp;#39;", "&#39;", "&#x27;", "&#X27;", "&#65;", "&#065;", "&#x41;", "&#x41", "&#65", "&#65a;",
        "&#0;", "&#1;", "&#8;", "&#9;", "&#10;", "&#11;", "&#13;", "&#31;", "&#127;", "&#128;", "&#129;",
        "&#130;", "&#150;", "&#157;", "&#159;", "&#160;", "&#xD800;", "&#xDFFF;", "&#xFFFE;", "&#xFFFF;",
        "&#x10FFFF;", "&#x110000;", "&#1114112;", "&#99999999999999999999;", "&#xFFFFFFFFFFFFFFFFFFFF;",
        "&#xfdd0;", "&#x1F600;", "&#128512;", "&#x;", "&#;", "&#", "&#x", "&#xg;", "&#abc;", "&;", "& ;",
        "&", "&&", "&&amp;", "a & b", "a&b", "a &amp b", "AT&T", "R&D", "Q&A", "&Jscr;ohn &HilbertSpace;ancock",
        "&checkmark;", "&NotNestedGreaterGreater;", "&CounterClockwiseContourIntegral;", "&thetasym;",
        "&thetasy", "&thetasymx;", "&abcdefghijklmnopqrstuvwxyzabcdefghij;", "&ampxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx;",
        "&aacute;&Aacute;&acirc;&Acirc;", "&auml;&ouml;&uuml;&Auml;&Ouml;&Uuml;", "&euro;&pound;&yen;&cent;",
        "&larr;&rarr;&uarr;&darr;&harr;", "&alpha;&beta;&gamma;&Delta;&Omega;", "&frac12;&frac14;&frac34;",
        "&sup2;&sup3;&deg;&plusmn;", "&fjlig;", "&NewLine;", "&Tab;", "&ThickSpace;", "&nbsp;&nbsp;x",
        "<b>bold</b> &amp; text", "<p>&lt;tag&gt;</p>", "a < b &amp; c", "a<b&amp;c", "&amp;<",
        "line one &amp;\nline two <b>\nline three &amp;", "&amp; first\n<second> &amp;\nthird &amp;",
        "&amp;\n&amp;<\n&amp;", "&lt;b&gt;", "&LT;B&GT;", "&#60;b&#62;", "&amp;#60;", "&#38;amp;",
        "&#x26;lt;", "&amp;#x26;lt;", "&quot;hello&quot;", "&#8220;hi&#8221;", "&#x2019;s", "it&#39;s",
        "it&rsquo;s", "DON&#39;T", "&#x1b;[31mred", "&shy;soft", "a&#x200b;b", "&zwj;", "&#xfeff;bom",
        "&ccedil;a va", "&Ccedil;A", "&CCEDIL;A", "&oelig;uvre", "&OElig;", "&AElig;&aelig;", "&thorn;&THORN;",
        "&iexcl;&iquest;", "&laquo;x&raquo;", "&#8203;", "&#x0;", "&#x0D;", "&#xD;x", "&#x85;", "&#133;"]

ACCENTS = ["café", "cafe\u0301", "naïve", "nai\u0308ve", "résumé", "re\u0301sume\u0301", "Ångström", "A\u030angstro\u0308m",
           "São Paulo", "Sa\u0303o Paulo", "Zürich", "Kraków", "Dvořák", "Đặng", "Nguyễn", "tiếng Việt",
           "e\u0301\u0302", "e\u0302\u0301", "a\u0323\u0302", "a\u0302\u0323", "q\u0307\u0323", "ḍ\u0307",
           "o\u0328\u0304", "ǭ", "\u0301", "\u0301a", "a\u0301\u0301\u0301", "x\u0334", "\u1100\u1161",
           "\u1100\u1161\u11a8", "\uac00\u11a8", "한\u1100", "Å", "\u212b", "Ω", "\u2126", "K", "\u212a", "ﬀ",
           "\u0041\u030a", "\u00c5", "\u1e9b\u0323", "\u0073\u0323\u0307", "\u1e69", "\u0f73", "\u0f71\u0f72",
           "\u0915\u093c", "\u0958", "\u09c7\u09be", "\u09cb", "\u0b47\u0b3e", "\u0bc6\u0bbe", "\u0cc6\u0cc2",
           "\u0dd9\u0dca", "\u1025\u102e", "\u3099", "か\u3099", "が", "ﾊﾞ", "ﾊﾟ", "ヷ", "ワ\u3099", "\u05d1\u05bc",
           "\ufb31", "\u2adc", "\u2add\u0338", "\u0344", "\u0340", "\u0958\u093c", "Ǖ", "U\u0308\u0304",
           "Ḱ", "ṩ", "ặ", "ỗ", "ữ", "ǖǘǚǜ", "ﬁ\u0301", "i\u0307", "İ", "ﬃ", "ẞ", "ß", "ſ", "ﬅ", "ﬆ",
           "Ǳ", "ǲ", "ǳ", "Ǆ", "ǅ", "ǆ", "Ĳ", "ĳ", "ŉ", "ﬂuﬃeﬆ", "ﬁsh ﬂy", "oﬀice", "Ĳssel", "ǉubljana",
           "a\u0345", "ᾳ", "ᾼ", "a\u0345b", "\u0345", "\u0345\u0345", "Α\u0345", "\u0313", "ἀ", "\u1f00\u0345",
           "u\u031b\u0301", "ứ", "\u0e01\u0e34\u0e48", "\u0e01\u0e48\u0e34", "\u05e9\u05c1\u05bc", "\u05e9\u05bc\u05c1",
           # U+11A7 (Hangul TBase) after an LV syllable: Python keeps it, utf8proc 2.8 drops it
           "\uac00\u11a7", "\u1100\u1161\u11a7", "\uac00\u11a7\u11a8", "\uac01\u11a7", "\u11a7\uac00\u11a7x"]

QUOTES = ["“quoted”", "‘single’", "‚low‛", "„low‟", "it’s", "it‘s", "itʼs", "‹›", "«»", "\"plain\"",
          "“nested ‘quotes’”", "″double prime″", "′prime′", "`backtick`", "´acute´", "‛reversed‛", "‟rev‟",
          "＂fullwidth＂", "＇fw＇", "〝ja〞", "〟", "❝heavy❞", "❛h❜", "ʻokina", "ʽturned"]

FULLWIDTH = ["ＬＯＵＤ　ＮＯＩＳＥＳ", "ｆｕｌｌｗｉｄｔｈ", "ＡＢＣ１２３", "Ｕﾀｰﾝ", "ｳﾀｰﾝ", "ｶﾞｷﾞｸﾞ",
             "ｱｲｳｴｵ", "ﾟﾞ", "･", "｡｢｣､", "！？", "（括弧）", "［］｛｝", "＄１００", "％", "＠ｕｓｅｒ", "＃ｔａｇ",
             "ｈｅｌｌｏ　ｗｏｒｌｄ", "ｄｏｇ", "ＤＯＧ", "Ｄｏｇ！", "１２：３０", "￥１０００", "￠￡￢￣￤￦",
             "ﾠ", "ﾡﾢﾣ", "ￂￃ", "ￚￛￜ", "￨￩￪￫￬￭￮", "　", "a　b", "\u3000\u3000x", "ｗｏｗ！～", "＇ｓ",
             "ＩＴ＇Ｓ", "＜ｓｔａｒｔ＿ｏｆ＿ｔｅｘｔ＞", "＆ａｍｐ；", "＆amp;", "｢ﾃｽﾄ｣", "ﾊﾝｶｸ ｶﾀｶﾅ"]

CJK = ["你好世界", "我爱北京天安门", "狗", "一只狗", "红色的汽车", "人", "日本語", "こんにちは", "カタカナ",
       "ひらがなとカタカナと漢字", "東京タワー", "ラーメン", "안녕하세요", "한국어", "강아지", "빨간 자동차",
       "사람", "中文 English 混合", "dog 狗 犬 개", "𠀀𠀁𠀂", "𪚥", "𰀀", "\U00031350", "㐀", "䶵", "鿿", "\u9ffd",
       "\U0002b739", "\U0002ebf0", "\U00031200", "々", "〆", "〇", "ー", "ｰ", "、。", "・", "〜", "～",
       "ㄅㄆㄇ", "ㆍ", "ᄀ", "ㄱㄴㄷ", "한", "\u1100", "\u115f\u1160", "\u3164", "\uffa0", "가나다라마바사",
       "韓國", "𝕏", "ℌ", "ℭ", "ℕ", "ⓐⓑⓒ", "ⒶⒷⒸ", "🅰", "🄰", "ᴀʙᴄ", "ᵃᵇᶜ", "ₐₑ", "ʰʲ"]

SCRIPTS = ["مرحبا بالعالم", "كلب", "السيارة الحمراء", "العَرَبِيَّة", "שלום עולם", "כֶּלֶב", "Привет мир",
           "собака", "КРАСНАЯ МАШИНА", "Ελληνικά", "σκύλος", "ΚΟΚΚΙΝΟ ΑΥΤΟΚΙΝΗΤΟ", "नमस्ते दुनिया", "कुत्ता",
           "हिन्दी", "বাংলা", "ਪੰਜਾਬੀ", "ગુજરાતી", "தமிழ்", "తెలుగు", "ಕನ್ನಡ", "മലയാളം", "සිංහල", "ภาษาไทย",
           "สุนัข", "ລາວ", "ភាសាខ្មែរ", "မြန်မာ", "ქართული", "Հայերեն", "አማርኛ", "ᏣᎳᎩ", "ᐃᓄᒃᑎᑐᑦ", "ᠮᠣᠩᠭᠣᠯ",
           "བོད་ཡིག", "ꦗꦮ", "ᜆᜄᜎᜓᜄ᜔", "ߒߞߏ", "ܣܘܪܝܝܐ", "ހިވެހި", "ⵜⴰⵎⴰⵣⵉⵖⵜ", "𐌲𐌿𐍄𐌹𐍃𐌺", "𓀀𓀁", "𒀀",
           "Ǎ Ǐ Ǒ", "Ŋŋ", "Ʃʃ", "Ƿ", "ᚠᚢᚦ", "ᛏᛁᚹ", "Ⰰⰰ", "ⲁⲃ", "Ꙁꙁ", "ꝏ", "ꞵ", "ꟹ", "\U0001e030", "\U00011f04",
           "\U0001df25", "\u0cf3", "\U00011f00\U00011f34", "\U0001e4d0", "\U000116d0", "\U0001e4e0\U0001e4ec"]

EMOJI = ["👍", "👍🏽", "👍🏿", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🏴‍☠️", "🇫🇷", "🇺🇸🇯🇵", "❤️", "❤", "♥️",
         "1️⃣", "#️⃣", "*️⃣", "🐶", "🐕", "🐕‍🦺", "😀😃😄", "🤷‍♂️", "🧑🏾‍🤝‍🧑🏻", "👁️‍🗨️", "🫠", "🫶🏼",
         "🪿", "🩷", "\U0001faad", "\U0001f6dc", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "🏴󠁧󠁢󠁷󠁬󠁳󠁿", "a dog 🐶", "red car 🚗!",
         "🐶🐱🐭", "☺", "☺️", "✌", "✌️", "⚽", "©️", "™️", "↔️", "\u200d", "a\u200db", "\u200c", "\ufe0f",
         "\ufe0e", "x\ufe0f", "🔟", "🆗", "🈁", "㊗️", "🀄", "🃏", "🎴", "♀", "♂", "⚧", "👨‍❤️‍👨",
         "😶‍🌫️", "🧔‍♀️", "🐻‍❄️", "🐈‍⬛", "🦸🏻‍♀️", "👯‍♀️", "🤌", "🥲", "🫥", "🧌"]

CONTROL = ["a\tb", "a\nb", "a\r\nb", "a\rb", "a\r\r\nb", "a\u00a0b", "a\u2028b", "a\u2029b", "a\u0085b",
           "a\x00b", "a\x01b", "a\x08b", "a\x0bb", "a\x0cb", "a\x0eb", "a\x1bb", "a\x1cb", "a\x1fb", "a\x7fb",
           "\x1b[31mred\x1b[0m", "\x1b[1;32mbold green\x1b[0m", "\x1b[Kx", "\x1b[m", "\x1b[;m", "\x1b[12", "\x1b[",
           "\x1b[١٢m", "\x1b[1;2;3;4;5;6Hx", "\x1b]0;title\x07", "\ufeffbom", "bom\ufeff", "a\ufeffb",
           "\u200bzero\u200bwidth", "a\u200eb", "a\u200fb", "a\u202ab\u202c", "\u2066iso\u2069", "\u206a\u206f",
           "\ufff9a\ufffab\ufffb", "\ufffc", "\ufffd", "a\ufffdb", "a\u3000b", "a\u2000b\u200ac", "a\u202fb",
           "a\u205fb", "a\u1680b", "a\u180eb", "\t\tx\t\t", "\n\nx\n\n", "x\n", "\nx", "a \n b", "a\n\n\nb",
           "a\x80b", "a\x81b", "a\x85b", "a\x8db", "a\x90b", "a\x91b\x92", "a\x9db", "a\x9fb", "\x80\x81\x82",
           "\x93quoted\x94", "don\x92t", "caf\x82", "x\x96y", "\x85", "line1\u2028line2\u2029line3",
           "\u0000", "\x1c\x1d\x1e\x1f", "a\x1c b", " \x1c", "\x1c ", "\u00ad", "soft\u00adhyphen",
           "\u061c", "\u2060", "\u180e", "\U000e0001", "\U000e0020\U000e007f", "\U0001d173\U0001d17a",
           "\ue000", "\uf8ff", "\U000f0000", "\ufdd0", "\uffff", "\U0010ffff", "\U0001fffe"]

EMPTY = ["", " ", "  ", "\t", "\n", "\r\n", " \t\n\r ", "\u00a0", "\u3000", "\u2028", "\u0085", "\u200b",
         "\ufeff", "\x00", "\x1b[0m", "&nbsp;", "&#32;", "&amp;nbsp;", "\u2002\u2003", "\u180e", "\x1c\x1f"]

SPECIAL = ["<start_of_text>", "<end_of_text>", "<START_OF_TEXT>", "<End_Of_Text>", "<start_of_text> a dog",
           "a dog <end_of_text>", "<end_of_text><start_of_text>", "a<start_of_text>b", "<start_of_text",
           "start_of_text>", "<start of text>", "<ſtart_of_text>", "<ſTART_OF_TEXT>", "&lt;start_of_text&gt;",
           "<start_of_text>" * 20, "<|startoftext|>", "<|endoftext|>", "<s>", "</s>", "<pad>", "<unk>",
           "</w>", "a</w>", "<end_of_text>!", "!<end_of_text>", "'s<start_of_text>", "<start_of_text>'s",
           "＜start_of_text＞", "<START_OF_TEXT>" + "x" * 5]

MISC = ["https://www.example.com/a/b?c=d&e=f#g", "user@example.com", "#hashtag", "@mention", "C++", "C#",
        "node.js", "e.g.", "i.e.", "U.S.A.", "Mr. Smith", "Dr.", "St. Louis", "9:30am", "24/7", "50/50",
        "rock & roll", "black/white", "on/off", "yes|no", "a->b", "a=>b", "a<=b", "a!=b", "a==b",
        "def f(x): return x**2", "printf(\"%d\\n\", x);", "<div class=\"x\">", "[link](http://x.y)",
        "**bold**", "_italic_", "~~strike~~", "`code`", "> quote", "- item", "* item", "1. item",
        "ALL CAPS SENTENCE.", "all lower sentence.", "Title Case Sentence", "a  b", "a   b    c", " a", "a ",
        "\u00a0a\u00a0", "ab" * 3, "a b " * 5, "the the the", "Ü", "ü", "ÿ", "Ÿ", "ĳ", "ǈ", "ǅ"]


def mojibake_samples():
    """Text that went through the wrong codec, the kinds ftfy repairs and the
    kinds it leaves alone."""
    base = ["café", "naïve", "Straße", "español", "niño", "façade", "résumé", "Zürich", "São Paulo",
            "“quoted”", "it’s", "—dash—", "…", "€100", "£5", "©", "Москва", "привет", "Ελλάδα",
            "日本語", "한국어", "emoji 👍", "ç", "à la mode", "às vezes", "à quel point", "fácil", "Ñandú",
            "Łódź", "Ærø", "ğüşıöç", "čšž", "ą ę", "ø", "ŒUVRE", "µ", "½", "×", "÷", "°C", "¿sí?", "¡no!",
            "“é”", "ā ē ī", "ķ ļ ņ", "ė į ų", "• bullet", "‘x’", "–", "™", "🐶 dog"]
    codecs = ["latin-1", "windows-1252", "windows-1251", "windows-1250", "windows-1253", "windows-1254",
              "windows-1257", "iso-8859-2", "mac_roman", "cp437", "cp850", "iso-8859-15"]
    out = []
    for s in base:
        b = s.encode("utf-8")
        for cd in codecs:
            m = b.decode(cd, errors="replace")
            if m != s:
                out.append(m)
    # Double mojibake, mixed, lossy and altered forms.
    for s in ["café", "“quoted”", "it’s", "naïve", "Москва", "…"]:
        once = s.encode("utf-8").decode("windows-1252", errors="replace")
        out.append(once.encode("utf-8").decode("windows-1252", errors="replace"))
        out.append(once.encode("utf-8").decode("latin-1"))
        out.append("plain text and " + once)
        out.append(once + " then ok " + s)
    out += ["Ã la mode", "Ã  la mode", "voilÃ le travail", "Ã s vezes", "Ã quele", "fÃ cil", "Ã©", "Ã©t",
            "Ã", "Â", "Â ", "Ã ", "Ã\xa0", "Ã¡", "Â¡", "a Â b", "x. Â y", "âœ” No problems", "â€œ like this â€\ufffd",
            "â€œ like this â€?", "â€", "â€™", "Ã¢â‚¬â„¢", "Ã¢â€žÂ¢", "ÃƒÂ©", "Ãƒ", "sÃ³", "schÃ¶n",
            "Ã°Å¸â€˜Â\x8d", "ðŸ‘", "ðŸ˜€", "ð\x9f\x98\x80", "í\xa0½í¸\x80", "í\xa0\xbd", "À\x80", "À\n",
            "Ð¿Ñ€Ð¸Ð²ÐµÑ‚", "Ð ", "ÐŸ", "вЂ™", "вЂњtextвЂќ", "РЎРѕР±Р°РєР°", "Ξ±ΞΊΞ±", "β€™", "ā€™",
            "Ð¢Ñ€Ð¸", "×ž×¢×œ×”", "Ø§Ù„Ø¹Ø±Ø¨ÙŠØ©", "à¤¹à¤¿à¤¨à¥\x8dà¤¦à¥€", "à²µ", "√©", "‚Äî", "‚Äô",
            "≈°", "√±", "Ã‘", "Ã±", "ÃŸ", "Ã¼ber", "Ã¶l", "GrÃ¼ÃŸe", "Ã\x89", "Ã\x81", "\xc3\xa9",
            "caf\xe9", "Ã©Ã©Ã©", "Ã© Ã©", "ÃÂ©", "Ã©\nÃ©", "ok\nÃ©\nok", "Â£", "Â©", "Â®", "Â°", "Â·",
            "Â»", "Â«", "Ã—", "Ã·", "â‚¬", "â„¢", "â€¢", "â€“", "â€”", "â€¦", "â€˜", "â€š", "Ã¦", "Ã†",
            "Å“", "Å’", "Å¡", "Å½", "Å¾", "Ä\x8d", "Ä‡", "Å‚", "Å„", "Ä™", "Ä…", "Åº", "Å¼", "Å›",
            "Ã¤Ã¶Ã¼", "ÃƒÂ¤", "Ãƒ Â¤", "Ã¡Ã©Ã\xadÃ³Ãº", "\x80", "\x81\x8d", "Ã\x81gua", "â\x80\x9c", "Ã\x83Â©",
            "a Ã© b", "x Ã¢â‚¬Å“ y", "Ã¢â‚¬Å“ ok Ã¢â‚¬\x9d", "│┌┐", "╔═╗", "▀▄█", "░▒▓", "╚═╝ Ã©",
            "(ツ)", "ｼ", "â˜º", "ðŸ™‚", "\u00c2\u00a0", "\u00c3\u00a0 ", "The Mona Lisa doesnÃƒÂ¢Ã¢â€šÂ¬Ã¢â€žÂ¢t have eyebrows."]
    return out


def random_unicode(rng, n):
    """Random short strings over many blocks (assigned and unassigned)."""
    blocks = [(0x20, 0x7E), (0xA0, 0x24F), (0x250, 0x2FF), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x52F),
              (0x590, 0x6FF), (0x900, 0xDFF), (0xE00, 0xEFF), (0x1000, 0x109F), (0x10A0, 0x10FF), (0x1100, 0x11FF),
              (0x1AB0, 0x1AFF), (0x1D00, 0x1DFF), (0x1E00, 0x1FFF), (0x2000, 0x206F), (0x2070, 0x20CF),
              (0x20D0, 0x20FF), (0x2100, 0x218F), (0x2190, 0x23FF), (0x2460, 0x24FF), (0x2500, 0x27BF),
              (0x2C00, 0x2E7F), (0x3000, 0x30FF), (0x3130, 0x318F), (0x3200, 0x33FF), (0x4E00, 0x4E80),
              (0xA640, 0xA8FF), (0xAC00, 0xAC40), (0xD7B0, 0xD7FF), (0xF900, 0xFAFF), (0xFB00, 0xFDFF),
              (0xFE00, 0xFE6F), (0xFF00, 0xFFEF), (0xFFF0, 0xFFFF), (0x10000, 0x1034F), (0x11000, 0x1147F),
              (0x11F00, 0x11F5F), (0x13000, 0x1302F), (0x16800, 0x16A3F), (0x1D400, 0x1D7FF), (0x1DF00, 0x1DFFF),
              (0x1E000, 0x1E08F), (0x1E4D0, 0x1E4FF), (0x1E800, 0x1E95F), (0x1F000, 0x1FAFF), (0x20000, 0x20050),
              (0x2EBF0, 0x2EC00), (0x31340, 0x31360), (0xE0000, 0xE007F), (0xF0000, 0xF0010), (0x10FFF0, 0x10FFFF)]
    out = []
    for _ in range(n):
        k = rng.randint(1, 12)
        s = []
        for _ in range(k):
            if rng.random() < 0.25:
                s.append(rng.choice(" aeiouAEIOU.,!?'&;#0123456789"))
            else:
                lo, hi = rng.choice(blocks)
                c = rng.randint(lo, hi)
                if 0xD800 <= c <= 0xDFFF:
                    c = 0x41
                s.append(chr(c))
        out.append("".join(s))
    return out


def surrogate_samples():
    return ["\ud83d\udc4d", "\ud83d", "\udc4d", "a\ud83db", "\udc4d\ud83d", "\ud83d\ud83d\udc4d", "x\udfffy",
            "\ud800\udc00", "\udbff\udfff", "\ud83d\udc36 dog", "&#xd83d;&#xdc4d;", "\ud83d&amp;\udc4d",
            "\ud83d\n\udc4d", "\ud800" * 3, "a\udc00\ud800b"]


def long_samples(rng):
    out = [" ".join(WORDS[:40]), " ".join(WORDS[40:120]), "a " * 40, "dog " * 31, "dog " * 30, "dog " * 29,
           "dog " * 32, "! " * 40, "!" * 100, "a" * 300, "ab" * 200, "1 " * 40, "1" * 100,
           "antidisestablishmentarianism " * 8, "supercalifragilisticexpialidocious" * 10,
           "🐶" * 40, "狗" * 60, "한" * 60, "&amp;" * 50, "&amp;" * 8 + "lt;", "Ã©" * 50, "x" * 2000,
           "the " * 29 + "end", "word " * 30, "word " * 30 + "word",
           # Python 3.11's int() refuses over 4300 digits: html.unescape raises ValueError
           "&#" + "1" * 4300 + ";", "&#" + "0" * 4301 + "65;", "&#x" + "0" * 5000 + "41;"]
    for _ in range(15):
        out.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(15, 60))))
    return out


def build_texts():
    rng = random.Random(20260123)
    cats = [
        ("ascii_words", WORDS + [w.upper() for w in WORDS[:40]] + [w.title() for w in WORDS[40:80]]),
        ("sentences", SENTENCES),
        ("punct", PUNCT + ["".join(rng.choice("!?.,;:~-_=+*&^%$#@()[]{}<>/\\|'\"`") for _ in range(rng.randint(1, 8)))
                           for _ in range(60)]),
        ("numbers", NUMBERS + [str(rng.randint(0, 10 ** rng.randint(1, 12))) for _ in range(30)]),
        ("contractions_case", CONTRACTIONS),
        ("html", HTML),
        ("accents", ACCENTS),
        ("quotes", QUOTES),
        ("fullwidth", FULLWIDTH),
        ("cjk_korean", CJK),
        ("scripts", SCRIPTS),
        ("emoji", EMOJI),
        ("control_whitespace", CONTROL),
        ("empty", EMPTY),
        ("special_tokens", SPECIAL),
        ("misc", MISC),
        ("mojibake", mojibake_samples()),
        ("surrogates", surrogate_samples()),
        ("long", long_samples(rng)),
        ("random_unicode", random_unicode(rng, 360)),
    ]
    # Combinations: prompts with the hard parts mixed in.
    mix = []
    pools = [PUNCT, NUMBERS, CONTRACTIONS, HTML, ACCENTS, QUOTES, FULLWIDTH, CJK, EMOJI, CONTROL]
    for _ in range(220):
        parts = [rng.choice(WORDS)] + [rng.choice(rng.choice(pools)) for _ in range(rng.randint(1, 3))]
        rng.shuffle(parts)
        mix.append(rng.choice(["", " ", "  "]).join(parts))
    cats.append(("mixed", mix))
    seen, texts = set(), []
    for cat, items in cats:
        for t in items:
            if t not in seen:
                seen.add(t)
                texts.append((cat, t))
    return texts


# ---------------------------------------------------------------------------
# Unicode properties (for the exhaustive C test)
# ---------------------------------------------------------------------------

def ranges(pred):
    out, start = [], None
    for c in range(0x110001):
        ok = c <= 0x10FFFF and pred(c)
        if ok and start is None:
            start = c
        elif not ok and start is not None:
            out.append((start, c - 1))
            start = None
    return out


def write_props(path):
    import regex
    text = "".join(chr(c) for c in range(0x110000))

    def rx(pat, flags=0):
        s = set(m.start() for m in regex.finditer(pat, text, flags))
        return lambda c: c in s

    sets = {
        "py_isspace": lambda c: chr(c).isspace(),
        "py_isalnum": lambda c: chr(c).isalnum(),
        "py_isdecimal": lambda c: chr(c).isdecimal(),
        "rx_space": rx(r"\s"),
        "rx_letter_ic": rx(r"[\p{L}]", regex.IGNORECASE),
        "rx_number_ic": rx(r"[\p{N}]", regex.IGNORECASE),
        "rx_other_ic": rx(r"[^\s\p{L}\p{N}]", regex.IGNORECASE),
    }
    lines = ["# Generated by tools/make_tokenizer_corpus.py: Python %s (unicodedata %s), regex %s."
             % (sys.version.split()[0], unicodedata.unidata_version, regex.__version__),
             "# 'set NAME' then hex ranges LO-HI; 'lower CP: CPS' (str.lower of one code point where it",
             "# changes); 'ccc CP N' (unicodedata.combining, non-zero); 'nfc CP: NFC / NFD' of one code point",
             "# where either changes it (Hangul syllables excepted: algorithmic)."]
    for name, pred in sets.items():
        rs = ranges(pred)
        lines.append("set %s %d" % (name, len(rs)))
        row = []
        for lo, hi in rs:
            row.append("%X-%X" % (lo, hi))
            if len(row) == 10:
                lines.append(" ".join(row))
                row = []
        if row:
            lines.append(" ".join(row))
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        ch = chr(c)
        low = ch.lower()
        if low != ch:
            lines.append("lower %X: %s" % (c, " ".join("%X" % ord(x) for x in low)))
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        k = unicodedata.combining(chr(c))
        if k:
            lines.append("ccc %X %d" % (c, k))
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF or 0xAC00 <= c <= 0xD7A3:
            continue
        ch = chr(c)
        nfc, nfd = unicodedata.normalize("NFC", ch), unicodedata.normalize("NFD", ch)
        if nfc != ch or nfd != ch:
            lines.append("nfc %X: %s / %s" % (c, " ".join("%X" % ord(x) for x in nfc),
                                                " ".join("%X" % ord(x) for x in nfd)))
    with open(path, "w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------
# Fuzz seeds (fuzz/fuzz_tokenizer.c, fuzz/fuzz_tokenizer_vocab.c)
# ---------------------------------------------------------------------------

def write_seeds(root, texts):
    import gzip
    tdir, vdir = os.path.join(root, "tokenizer"), os.path.join(root, "tokenizer_vocab")
    for d in (tdir, vdir):
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
    # Text harness: byte 0 = 0 (ftfy 6.1.1, context 32), then the text; one
    # text in 16 of the corpus, shortest first within the budget.
    picked = [t for i, (_, t) in enumerate(texts) if i % 16 == 0 and len(t) < 300]
    for i, t in enumerate(picked):
        mode = bytes([(i % 2) | (0 if i % 5 else (i % 64) << 1)])
        with open(os.path.join(tdir, "seed_%03d" % i), "wb") as f:
            f.write(mode + t.encode("utf-8", "surrogatepass"))
    # Vocabulary harness: even = gzip bytes, odd = line edits of the official text.
    gz = [b"", b"#version: 0.2\n", b"#version: 0.2\ni n\nt h\n", b"\xff\xfe", "#v\n\u0100 \u0101\n".encode()]
    for i, body in enumerate(gz):
        with open(os.path.join(vdir, "gz_%02d" % i), "wb") as f:
            f.write(b"\x00" + gzip.compress(body, mtime=0))
    edits = ["5\nx y z\n", "100\n\n", "7\na\n", "1\n< s>\n", "48894\nx y\n", "1\nt h\ni n\n",
             "3\n\u0120 x\n", "9\na\tb\n", "12\na\u00a0b\n", "20\n<start_of_text> x\n", "2\nd o\ng </w>\n",
             "40\na a\na a</w>\n", "77\nh e\nhe l\nhel lo</w>\n", "8\n\r\n", "15\na b c d e f\n"]
    for i, body in enumerate(edits):
        with open(os.path.join(vdir, "edit_%02d" % i), "wb") as f:
            f.write(b"\x01" + body.encode())
    with open(os.path.join(vdir, "edit_badutf8"), "wb") as f:
        f.write(b"\x0130\n\xff\xfe\n")
    return len(picked), len(gz) + len(edits) + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sam3-src", required=True, help="facebookresearch/sam3 checkout (repository root)")
    ap.add_argument("--ftfy-src", action="append", required=True,
                    help="ftfy checkout; the first gives 'ids' (repeatable)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "data", "tokenizer"))
    ap.add_argument("--seeds", default=os.path.join(os.path.dirname(__file__), "..", "fuzz", "seeds"),
                    help="where the fuzz seeds go (tokenizer/, tokenizer_vocab/)")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.sam3_src, args.worker[0], args.worker[1])
        return
    texts = build_texts()
    hexes = [t.encode("utf-8", "surrogatepass").hex() for _, t in texts]
    tmp = os.path.join(args.out, ".texts.json")
    os.makedirs(args.out, exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(hexes, f)
    runs = []
    try:
        for src in args.ftfy_src:
            res = subprocess.run([sys.executable, __file__, "--sam3-src", args.sam3_src, "--ftfy-src", src,
                                  "--worker", src, tmp],
                                 check=True, capture_output=True, text=True)
            runs.append(json.loads(res.stdout))
    finally:
        os.remove(tmp)
    counts = {}
    with open(os.path.join(args.out, "corpus.jsonl"), "w", encoding="utf-8") as f:
        for i, (cat, t) in enumerate(texts):
            # JSON readers refuse escaped lone surrogates: such texts are shown as Python's ascii().
            shown = t if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in t) else ascii(t)
            rec = {"cat": cat, "hex": hexes[i], "text": shown}
            rec.update(runs[0]["results"][i])
            for run in runs[1:]:
                other = run["results"][i]
                key = "ids" if "ids" in other else "error"
                if other.get(key) != rec.get(key):
                    rec["%s_ftfy_%s" % (key, run["version"])] = other[key]
            f.write(json.dumps(rec, ensure_ascii=True) + "\n")
            counts[cat] = counts.get(cat, 0) + 1
    write_props(os.path.join(args.out, "unicode_props.txt"))
    nt, nv = write_seeds(args.seeds, texts)
    print("fuzz seeds: %d text, %d vocabulary in %s" % (nt, nv, os.path.relpath(args.seeds)))
    print("%d texts (ftfy %s) in %d categories:" % (len(texts), ", ".join(r["version"] for r in runs), len(counts)))
    for cat, n in counts.items():
        print("  %-20s %d" % (cat, n))


if __name__ == "__main__":
    main()
