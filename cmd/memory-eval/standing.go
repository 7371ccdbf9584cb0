package main

// The standing-instructions set (testdata/eval-standing, docs/evaluation.md):
// questions whose answer depends on a standing preference or instruction
// the user gave earlier ("Standing instruction: always format code with
// syntax highlighting", asked later as "Show me how to implement a login
// feature"). They share no word with it, so no ranking of words finds it;
// a server meets them by returning standing facts with every answer.

func init() {
	questionKinds["standing"] = "depends on an earlier standing preference or instruction of the user, sharing no word with it"
}

// evidenceWindowFor is how much of an answer's text may hold the
// answering observation. A standing question's answer is a standing fact,
// which a server labels as instructions to follow in this answer, so it
// counts anywhere in the answer; any other question's within
// evidenceWindow.
func evidenceWindowFor(q question, text string) int {
	if q.Kind == "standing" {
		return max(len(text), evidenceWindow)
	}
	return evidenceWindow
}
