// Text encodings of files written outside pgmate (PGN above all): what is not UTF-8 is
// taken as Windows-1252, the encoding of most 8-bit PGN (ChessBase, older Windows tools).
// Windows-1252 is Latin-1 (ISO 8859-1) with printable characters in 0x80-0x9F (€ „ “ ” ‘ ’
// – — ...), so Latin-1 text reads right too, except for C1 control codes, which no text
// file means.
#pragma once

#include <string>
#include <string_view>

namespace pgmate {

// True when s is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF). NUL bytes count as valid.
bool is_valid_utf8(std::string_view s);

// Every byte of s as a Windows-1252 character, in UTF-8. The five bytes Windows-1252
// leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) become the C1 controls U+0081... as in
// Latin-1, so no byte is lost.
std::string windows1252_to_utf8(std::string_view s);

// s itself when it is valid UTF-8, else s read as Windows-1252 (above). The result is
// always valid UTF-8; ASCII is never changed.
std::string to_utf8(std::string_view s);

}  // namespace pgmate
