"""Light LaTeX clean-up for titles and abstracts (arXiv's are written in TeX).

Not a TeX engine: inline math loses its dollars and gets Unicode for the common
symbols, formatting commands keep their argument, citations and labels go, accents
become letters. Anything unknown is left as it was. Dollars follow pandoc's rule
(``$`` opens before a non-space, closes after one and not before a digit), so
"$5 and $10" stays money.
"""

from __future__ import annotations

import re

__all__ = ["strip_latex"]

_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ",
    "tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ",
    "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "times": "×", "ast": "∗", "rtimes": "⋊", "ltimes": "⋉", "cdot": "·", "pm": "±", "mp": "∓",
    "leq": "≤", "le": "≤", "geq": "≥",
    "ge": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "sim": "∼", "simeq": "≃", "equiv": "≡",
    "propto": "∝", "infty": "∞", "partial": "∂", "nabla": "∇", "sum": "∑", "prod": "∏",
    "int": "∫", "in": "∈", "notin": "∉", "subset": "⊂", "subseteq": "⊆", "cup": "∪",
    "cap": "∩", "forall": "∀", "exists": "∃", "to": "→", "rightarrow": "→",
    "leftarrow": "←", "Rightarrow": "⇒", "mapsto": "↦", "ll": "≪", "gg": "≫", "ell": "ℓ",
    "hbar": "ħ", "circ": "∘", "degree": "°", "ldots": "…", "dots": "…", "cdots": "⋯",
    "LaTeX": "LaTeX", "TeX": "TeX", "textasciitilde": "∼", "log": "log", "exp": "exp",
    "sin": "sin", "cos": "cos", "max": "max", "min": "min", "arg": "arg", "lim": "lim",
    "AA": "Å", "odot": "⊙", "prime": "′", "otimes": "⊗", "oplus": "⊕", "langle": "⟨",
    "rangle": "⟩", "perp": "⊥", "parallel": "∥", "star": "⋆", "bullet": "•",
    "thinspace": " ", "displaystyle": "", "textstyle": "", "scriptstyle": "",
}
# Math accents: \bar{D} → D̄, \vec\sigma → σ⃗ (a combining mark after the letter).
_MATH_ACCENTS = {"bar": "\u0304", "overline": "\u0304", "tilde": "\u0303", "widetilde": "\u0303",
                 "hat": "\u0302", "widehat": "\u0302", "vec": "\u20d7", "dot": "\u0307",
                 "ddot": "\u0308"}
_COMBINING = {"'": "\u0301", "`": "\u0300", '"': "\u0308", "^": "\u0302", "~": "\u0303",
              "=": "\u0304", ".": "\u0307", "c": "\u0327", "v": "\u030c", "u": "\u0306",
              "H": "\u030b", "k": "\u0328", "r": "\u030a"}
_ESCAPES = {r"\%": "%", r"\&": "&", r"\_": "_", r"\#": "#", r"\$": "$", r"\{": "{", r"\}": "}",
            "``": "\u201c", "''": "\u201d"}

_KEEP_ARGUMENT = re.compile(
    r"\\(?:emph|textbf|textit|texttt|textsc|textrm|textsf|textup|textnormal|underline|mbox|"
    r"text|url|mathrm|mathbf|mathit|mathcal|mathbb|mathsf|mathtt|mathfrak|boldsymbol|"
    r"operatorname|bm|cal)\s*\{([^{}]*)\}")
_DROP_WITH_ARGUMENT = re.compile(r"\\(?:cite[pt]?|citep|citet|ref|eqref|label|footnote)"
                                 r"\s*(?:\[[^\]]*\])?\{[^{}]*\}")
_HREF = re.compile(r"\\href\s*\{[^{}]*\}\s*\{([^{}]*)\}")
_OLD_STYLE = re.compile(r"\{\\(?:em|bf|it|sl|sc|tt|rm|cal)(?![A-Za-z])\s*"
                        r"(?:\{([^{}]*)\}|([^{}]*))\s*\}")
# A font switch left without braces in math ("\mathcal L", "{\rm SL}" once unwrapped): the
# letters it sets are what a reader sees.
_FONT_SWITCH = re.compile(r"\\(?:mathcal|mathrm|mathbf|mathit|mathbb|mathsf|mathtt|mathfrak|"
                          r"boldsymbol|bm|rm|bf|cal|it|sf|tt)(?![A-Za-z])\s*")
_ACCENT = re.compile(r"\\(['`\"^~=.])\s*(?:\{\s*([A-Za-z])\s*\}|([A-Za-z]))"
                     r"|\\([cvuHkr])(?:\s*\{\s*([A-Za-z])\s*\}|\s+([A-Za-z])(?![A-Za-z]))")
_SYMBOL = re.compile(r"\\([A-Za-z]+)(?![A-Za-z])")
_SPACING = re.compile(r"\\(?:[,;:! ]|quad|qquad)|\\\\")
# Nesting deeper than this is left partly undone: each round is a pass over the whole text.
_MAX_ROUNDS = 12
_EMPTY_ARGUMENT = re.compile(r"(\\[A-Za-z]+)\{\s*\}")  # "\AA{} and": the braces end the name
_TIE = re.compile(r"(?<=[\w.,)])~(?=[\w\\(])")

_DISPLAY_MATH = re.compile(r"(?<!\\)\$\$([^$]{1,400}?)\$\$")
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?=[^\s$])((?:[^$\\]|\\.){1,400}?)(?<=[^\s\\])\$(?![\d$])")
# A pair of dollars the strict rule above leaves alone ("$ d=1$", "$\\sim$1"): math only when
# the content says so (a command, script or brace; or = < > or one letter, not after a digit).
_LOOSE_MATH = re.compile(r"(?<![\\$])\$((?:[^$\\]|\\.){1,200}?)(?<!\\)\$(?!\$)")
_STRONG_MATH = re.compile(r"[\\^_{}]")
_WEAK_MATH = re.compile(r"[=<>]|^\s*[A-Za-z]\s*$")
_MATH_ACCENT = re.compile(r"\\(" + "|".join(_MATH_ACCENTS) + r")(?![A-Za-z])\s*"
                          r"(?:\{\s*([^{}\s]{1,3})\s*\}|([^\s{}\\]))")
_GREEK = re.compile(r"\\(" + "|".join(k for k in _SYMBOLS if len(_SYMBOLS[k]) == 1) +
                    r")(?![A-Za-z])")
_FRAC = re.compile(r"\\[dt]?frac\s*(?:\{([^{}]*)\}|(\w))\s*(?:\{([^{}]*)\}|(\w))")
_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_SCRIPT = re.compile(r"([\^_])\{([^{}]*)\}")
_SIZING = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![A-Za-z])")
_BRACES = re.compile(r"\{([^{}\s\\:,;=]{1,40})\}")
_COMMAND_BEFORE = re.compile(r"\\[A-Za-z]+\s*$")


def has_latex(text: str) -> bool:
    """Whether ``text`` holds anything ``strip_latex`` rewrites: text without a backslash, a
    dollar or a pair of quote signs it gives back as it is."""
    return "\\" in text or "$" in text or "``" in text or "''" in text


def strip_latex(text: str) -> str:
    """Turn the LaTeX that titles and abstracts commonly carry into plain text."""
    if not has_latex(text):
        return text
    text = _DISPLAY_MATH.sub(lambda m: _math(m[1]), text)
    text = _INLINE_MATH.sub(lambda m: _math(m[1]), text)
    text = _LOOSE_MATH.sub(_loose_math, text)
    text = _commands(text)
    text = _TIE.sub(" ", text)
    for escaped, plain in _ESCAPES.items():
        text = text.replace(escaped, plain)
    return text


def _commands(text: str) -> str:
    """Text-mode commands, innermost first, until none is left to rewrite."""
    previous = None
    for _ in range(_MAX_ROUNDS):
        if previous == text:
            break
        previous = text
        text = _EMPTY_ARGUMENT.sub(r"\1 ", text)
        text = _DROP_WITH_ARGUMENT.sub("", text)
        text = _HREF.sub(r"\1", text)
        text = _KEEP_ARGUMENT.sub(r"\1", text)
        text = _OLD_STYLE.sub(lambda m: m[1] if m[1] is not None else m[2], text)
        text = _ACCENT.sub(_accented, text)
        text = _math_commands(text)  # math written without dollars: \bar{K}N, \sqrt{s}
        text = _BRACES.sub(_unwrap, text)
    text = _SPACING.sub(" ", text)
    return _SYMBOL.sub(lambda m: _SYMBOLS.get(m[1], m[0]), text)


def _fraction(match: re.Match[str]) -> str:
    """\\frac{a}{b} and \\frac12 → a/b."""
    return f"{match[1] if match[1] is not None else match[2]}/" + (
        match[3] if match[3] is not None else match[4])


def _math_commands(text: str) -> str:
    text = _FRAC.sub(_fraction, text)
    text = _SQRT.sub(r"√\1", text)
    text = _GREEK.sub(lambda m: _SYMBOLS[m[1]], text)
    return _MATH_ACCENT.sub(lambda m: (m[2] or m[3]) + _MATH_ACCENTS[m[1]], text)


def _math(content: str) -> str:
    """Inline math as readable text: x^{2} → x^2, \\frac{a}{b} → a/b, \\alpha → α."""
    previous = None
    for _ in range(_MAX_ROUNDS):
        if previous == content:
            break
        previous = content
        content = _FRAC.sub(_fraction, content)
        content = _SQRT.sub(r"√\1", content)
        content = _KEEP_ARGUMENT.sub(r"\1", content)
        content = _OLD_STYLE.sub(lambda m: m[1] if m[1] is not None else m[2], content)
        content = _FONT_SWITCH.sub("", content)
        content = _SCRIPT.sub(lambda m: m[1] + (m[2] if len(m[2]) <= 1 else f"({m[2]})"),
                              content)
    content = _SIZING.sub("", _math_commands(content))
    content = _SPACING.sub(" ", content)
    content = _SYMBOL.sub(lambda m: _SYMBOLS.get(m[1], m[1]), content)
    return content.replace("{", "").replace("}", "")


def _loose_math(match: re.Match[str]) -> str:
    content = match[1]
    if _STRONG_MATH.search(content) or (
            _WEAK_MATH.search(content) and not content.lstrip()[:1].isdigit()):
        return _math(content)
    return match[0]


def _unwrap(match: re.Match[str]) -> str:
    """{word} → word, unless the braces are a command's argument (\\foo{word})."""
    before = match.string[max(0, match.start() - 40):match.start()]
    return match[0] if _COMMAND_BEFORE.search(before) else match[1]


def _accented(match: re.Match[str]) -> str:
    accent = match[1] or match[4]
    letter = match[2] or match[3] or match[5] or match[6]  # \H{o}, or {\H o} as BibTeX has it
    return letter + _COMBINING[accent]
