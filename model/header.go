package model

import "strconv"

// AppendClassColumns appends the k column names ",prefix0,prefix1,…,
// prefix(k−1)" — one per class, each after a comma — to b and returns the
// extended slice, as predict's --scores header does with the prefixes
// "score" and "prob"; k ≤ 0 appends nothing. The work is linear in the
// header's length (append grows b geometrically), where building the
// header by repeated string concatenation copied it once per class: 13 s
// for 65,536 classes.
func AppendClassColumns(b []byte, prefix string, k int) []byte {
	for j := range max(k, 0) {
		b = append(b, ',')
		b = append(b, prefix...)
		b = strconv.AppendInt(b, int64(j), 10)
	}
	return b
}

// ClassColumns returns the fields of AppendClassColumns as a string:
// ",prefix0,…,prefix(k−1)", or "" for k ≤ 0.
func ClassColumns(prefix string, k int) string {
	return string(AppendClassColumns(nil, prefix, k))
}
