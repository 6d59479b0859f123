"""Refusals: why no value may stand at a place in shell text, and what to write instead.

Each is told after the placeholder (``{{ inputs.x }} stands inside single quotes …``);
``{tok}`` stands for the placeholder's own text.
"""

from __future__ import annotations

SINGLE = (
    "stands inside single quotes, where sh substitutes nothing — and a quoted string is often "
    "code for another program; end the quotes before it and reopen them after "
    "('…'{tok}'…'), or use double quotes"
)
ANSI = "stands inside $'…', where sh substitutes nothing; write it outside the quotes"
QUOTED_BODY = (
    "stands in the body of a quoted heredoc (<<'EOF'), where sh substitutes nothing — and "
    "such a body is often code for another program; unquote the delimiter (<<EOF) if the "
    "body is plain text"
)
BACKTICK = "stands inside backticks, whose text sh parses a second time; write $(…) instead"
ARITH = (
    "stands inside an arithmetic expression, which bash evaluates — a value like a[$(cmd)] "
    "runs cmd; assign it to a variable, check that it is a number "
    "(n={tok}; case $n in ''|*[!0-9]*) exit 2;; esac) and use $((n …))"
)
PARAM = (
    "stands inside ${…}, whose offsets and subscripts bash evaluates as arithmetic "
    "(a[$(cmd)] runs cmd); assign it to a variable first (v={tok}) and expand that"
)
DBRACK = (
    "stands inside [[ … ]], where bash evaluates the operands of -eq, -lt … as arithmetic "
    "(a[$(cmd)] runs cmd); use [ … ] (test) instead"
)
ARRAY = (
    "stands inside an array assignment, whose subscripts bash evaluates as arithmetic; assign "
    "it to a plain variable first (v={tok})"
)
BACKSLASH = "follows a backslash, which would escape the text omg substitutes; drop the backslash"
DOLLAR = "follows a $, which would change how the substituted text is read; drop the $"
MULTILINE = "is split across lines; write it on one line"
COMMAND = (
    "stands where the program to run is named, so the value would choose what runs; name "
    "the program in the command and pass the value as an argument"
)
DELIMITER = "is a heredoc delimiter; write a fixed word"
LOOP_NAME = "names a loop variable; write a fixed name"
FUNCTION_NAME = "names a function; write a fixed name"
CODE = "is {what}, so the value would be read as code; {fix}"
STDIN = (
    "flows into the standard input of a shell or interpreter, which reads it as code; pass it "
    'as an argument instead (sh -s -- {tok} reads it as "$1")'
)
INTEGER = (
    "is assigned in a script that declares integer or nameref variables (declare -i / -n), "
    "whose values bash evaluates as arithmetic (a[$(cmd)] runs cmd); drop the -i / -n"
)

ARITH_FLOW = (
    "is assigned to ${name}, which an arithmetic expression reads — bash evaluates a "
    "variable's value there (a[$(cmd)] runs cmd); compute with a program that reads it as "
    'data instead, e.g. expr "${name}" + 1, or awk -v n="${name}" \'BEGIN { print n + 1 }\''
)
POSITIONAL_FLOW = (
    "is an argument ($1 …) that an arithmetic expression reads — bash evaluates its value "
    "there (a[$(cmd)] runs cmd); compute with a program that reads it as data instead, "
    'e.g. expr "$1" + 1'
)
CODE_FLOW = (
    "is assigned to ${name}, which is then expanded where code is read (the program to run, "
    "eval, trap, an sh -c script …), so the value would be read as code; pass it as an "
    'argument instead (sh -c \'… "$1"\' _ "${name}")'
)
POSITIONAL_CODE_FLOW = (
    "is an argument ($1 …) that is then expanded where code is read (the program to run, "
    "eval, an sh -c script …), so the value would be read as code; pass it as an argument "
    "of a fixed program instead"
)
READ_FLOW = (
    "may reach ${name} through `read` (a pipe, a here-string or a heredoc feeds it), and ${name} "
    "is then expanded where code is read, so the value would be read as code; do not run what "
    "was read — pass it as an argument of a fixed program"
)
