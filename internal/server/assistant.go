package server

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the server tells the assistant about using its memory
// (docs/system-prompt.md): the instructions every session gets, and the
// prompt a host can attach instead of pasting one into its settings.

// MaxInstructions bounds the instructions' bytes: Claude Code cuts longer
// server instructions, so the guide must fit whole.
const MaxInstructions = 2048

// instructions is the guide in the initialize result (2025 protocols) and
// the server/discover result (2026-07-28).
const instructions = `This server is your memory of the user: a knowledge graph of entities (people, organizations, events, projects, places), observations (one fact each) and relations between them. It lasts across chats.

Before you answer anything that may depend on earlier chats (the user, their people, plans, likes, past decisions), call search_nodes with the question's key words. Then open_nodes with names gives whole entities; depth: 1 adds the entities related to them.

Store what you learn as you go:
- One fact per observation, short and self-contained ("Allergic to peanuts", "Moved to Leeds in May 2026").
- An entity for each recurring person, organization and significant event, named as people call it, typed person, organization, event...; add_observations grows an entity that exists (create_entities skips names already there).
- Relations in active voice, from the one who acts: Alice works_at Acme, Alice parent_of Ella.
- A standing preference or instruction of the user (how to answer, format, tone, language) as an observation on the user's entity that begins with "Standing preference: " or "Standing instruction: ". search_nodes returns these with every answer, whatever its words: follow them.

Answers are bounded. A long one comes in parts: pass its nextCursor back as cursor. search_nodes' limit (1-100, default 10) is how many closest matches fill the answer; read_graph with outline: true gives an overview of a big memory; since/until keep only what was learned in a time window (since: what changed lately), and showTimes: true says when each fact was learned.`

// The prompt: the seeds' system prompt for personalising chats, in this
// project's words.
const (
	promptName = "remember-the-user"
	// maxPromptUser bounds the user argument, in characters.
	maxPromptUser = 200
	defaultUser   = "default_user"
)

func (s *Server) addPrompts() {
	s.mcp.AddPrompt(&mcp.Prompt{
		Name:        promptName,
		Title:       "Remember the user",
		Description: "A system prompt that has the assistant recall what it knows about the user at the start of a chat and keep its memory of them up to date",
		Arguments: []*mcp.PromptArgument{{
			Name:        "user",
			Title:       "User",
			Description: fmt.Sprintf("The name of the user's entity in the memory (default %s; at most %d characters)", defaultUser, maxPromptUser),
		}},
	}, getPrompt)
}

func getPrompt(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	user, err := promptUser(req.Params.Arguments["user"])
	if err != nil {
		return nil, err
	}
	return &mcp.GetPromptResult{
		Description: "Remember the user: recall at the start of each chat, store what is new as it comes",
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: promptText(user)}}},
	}, nil
}

// promptUser checks the user argument: blank is the default user; control
// characters and more than maxPromptUser characters are refused.
func promptUser(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return defaultUser, nil
	}
	if n := utf8.RuneCountInString(v); n > maxPromptUser {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %s: user must be at most %d characters; got %d", promptName, maxPromptUser, n)}
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %s: user must be one line without control characters", promptName)}
	}
	return v, nil
}

// promptText is the prompt for user: the seeds' four steps (who the user
// is, recall first, what to watch for, how to store it).
func promptText(user string) string {
	return fmt.Sprintf(`In every chat, use your memory (the knowledge graph of the memory server) like this:

1. Who you are talking to: assume the user is %[1]s, the entity of that name in your memory. If you do not know who %[1]s is yet, find out, politely and early.

2. Recall first: begin each chat by saying only "Remembering..." and then search your memory for everything that matters to the user's message (search_nodes; open_nodes on %[1]s). Call the knowledge graph "my memory" when you talk about it. Follow every standing preference or instruction it returns.

3. Notice what is worth keeping, as the chat goes on:
   a) identity: age, gender, where they live, job, education;
   b) behaviour: interests, habits;
   c) preferences: how they like you to communicate, their language, formats;
   d) goals: aims, targets, plans;
   e) relationships: the people and organizations in their life, up to three steps away.

4. Update your memory when something new came up:
   a) create entities for the organizations, people and significant events that recur;
   b) connect them to %[1]s and to each other with relations in active voice (works_at, parent_of);
   c) store each fact as its own observation, on the entity it is about;
   d) store a standing preference or instruction of the user as an observation on %[1]s beginning with "Standing preference: " or "Standing instruction: ".`, user)
}
