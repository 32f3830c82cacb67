#!/usr/bin/env bash
# Issue 30: numbers are parsed from text in one module, src/sloserve/core/declared_key.{h,cc}
# (ParseNumber, ParseInteger, ParseUnsigned, ParseNumberList and the Parse*Token of the hot
# paths), so NaN, infinities, trailing junk and overflow are refused the same way everywhere.
# Fails, naming file:line, when src/ or apps/ call a C or C++ number parser anywhere else,
# or when a file below is listed but no longer needs to be.
#
# usage: number_parsing_scan.sh SOURCE_DIR
set -euo pipefail
cd "${1:?usage: number_parsing_scan.sh SOURCE_DIR}"

pattern='(^|[^A-Za-z0-9_])(strto(d|f|ld|l|ll|ul|ull|imax|umax)|sto(d|f|i|l|ld|ll|ul|ull)|ato(f|i|l|ll)|from_chars)([^A-Za-z0-9_]|$)'

# The one parsing module.
module=(
  src/sloserve/core/declared_key.h
  src/sloserve/core/declared_key.cc
)
# Being converted (issue 30): delete each line once its file is converted.
converting=()

status=0
while IFS= read -r hit; do
  file=${hit%%:*}
  for allowed in "${module[@]}" "${converting[@]}"; do
    [[ $file == "$allowed" ]] && continue 2
  done
  echo "$hit"
  status=1
done < <(grep -rInE "$pattern" src apps || true)
if [[ $status != 0 ]]; then
  echo "number parsing outside src/sloserve/core/declared_key.{h,cc} (above): use ParseNumber," \
       "ParseInteger, ParseUnsigned, ParseNumberList or, in a per-element hot loop," \
       "ParseNumberToken / ParseIntegerToken" >&2
fi

for file in "${converting[@]}"; do
  if ! grep -qE "$pattern" "$file" 2>/dev/null; then
    echo "$file no longer parses numbers itself: delete it from 'converting' in $0" >&2
    status=1
  fi
done
[[ $status == 0 ]] &&
  echo "number parsing: only in declared_key.{h,cc} (and ${#converting[@]} files being converted)"
exit $status
