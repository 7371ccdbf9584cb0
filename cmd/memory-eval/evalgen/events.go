package main

// An event is a short exchange about something that happened in one
// speaker's life, written as two friends text each other. Its lines name
// the speaker who has the news as {A} and the other as {B}; {1}…{4} are the
// slots filled from one of the event's items. Questions are asked as
// someone who knows the pair but not the words they used would ask them.
type event struct {
	lines     []line
	questions []ask
	// fact is the event as a note-taking assistant would extract it about
	// {A} for the per-person memory; {date} is the day it was said.
	fact  string
	items [][]string
}

type line struct {
	other bool // said by {B} rather than {A}
	text  string
}

type ask struct {
	kind   string
	text   string
	target int // index of the line that answers
}

func a(text string) line { return line{false, text} }
func b(text string) line { return line{true, text} }

var events = []event{
	{ // a trip booked; who with is in the reply to the other's question
		lines: []line{
			a("Just booked flights to {1}! Leaving in three weeks"),
			a("{2}. The plan is to {3}"),
			b("So jealous. Bring me back something"),
		},
		questions: []ask{
			{"temporal", "When did {A} book the trip to {1}?", 0},
			{"span", "Who is {A} travelling to {1} with?", 1},
			{"paraphrase", "Where is {A} flying off to in three weeks' time?", 0},
		},
		fact: "Booked flights to {1} on {date}, going with {4}",
		items: [][]string{
			{"Lisbon", "My cousin Ana, she's never been either", "eat our way through every bakery in Alfama", "a cousin, Ana"},
			{"Hokkaido", "Just me and my brother Jae", "ski powder for a week and then sit in hot springs", "a brother, Jae"},
			{"Reykjavik", "Tom from work and his girlfriend", "drive the ring road and hopefully see the northern lights", "a colleague, Tom, and his girlfriend"},
			{"Naples", "Mum! Her first holiday since Dad passed", "eat pizza twice a day and take the ferry to Capri", "their mother"},
			{"Montreal", "The uni crowd, all six of us", "do the jazz festival and eat bagels at 3am", "six friends from university"},
			{"Split", "Nobody, solo trip for once", "sail round the islands and read on a beach", "nobody (a solo trip)"},
			{"Marrakech", "My partner, it's a surprise for our anniversary", "get lost in the souks and do a cooking class", "their partner, as an anniversary surprise"},
			{"Tbilisi", "Grandad wanted to see where his family came from, so him", "visit the village his parents left in 1951", "their grandfather"},
		},
	},
	{ // advice: the answer is the reply, sharing no word with the problem
		lines: []line{
			a("{1}"),
			b("{2}"),
			a("Good shout, I'll give that a go"),
		},
		questions: []ask{
			{"reply", "What did {B} suggest when {A} {3}?", 1},
			{"paraphrase", "{4}", 0},
		},
		fact: "Was advised by {B} on {date}, after they {3}: {2}",
		items: [][]string{
			{"My lower back has been killing me since I started working from the sofa", "Get a proper chair. And swim twice a week, it sorted mine out in a month", "complained about back pain", "Why has {A}'s back been sore?"},
			{"I can't sleep at all lately, I'm lying awake till 3", "Phone in another room from ten. Sounds dull but it worked for me", "said they couldn't sleep", "Until what time has {A} been lying awake?"},
			{"My landlord still hasn't fixed the boiler, it's been five weeks", "Write to the council's housing team, they sent mine a letter and he came the next day", "had trouble with the landlord and the boiler", "How long has {A} been waiting for the boiler to be fixed?"},
			{"I keep forgetting to water the plants and they're all dying", "Cacti. Honestly. Or one of those self watering pots from Ikea", "said their plants kept dying", "Why are {A}'s plants dying?"},
			{"Interview on Thursday and I'm already sweating about it", "Write down three stories about times you fixed something hard. Practise them out loud in the car", "was nervous about an interview", "What day is {A}'s interview?"},
			{"The kids won't eat anything green, I've tried everything", "Let them grow it. Ours ate peas off the plant once they'd planted them themselves", "complained that the kids refuse vegetables", "What won't {A}'s kids eat?"},
			{"Thinking of learning Spanish before the summer but no idea where to start", "Find a tandem partner online, an hour a week of chatting beats any app", "wanted to learn Spanish", "What language does {A} want to learn before summer?"},
			{"My knees hurt after every run now", "You need new trainers, yours must have done a thousand miles. Get a gait check at the running shop", "said their knees hurt after running", "When do {A}'s knees hurt?"},
			{"Money is tight this month, the car repair wiped me out", "Do a no-spend fortnight. Batch cook on Sunday and take lunch in every day", "said money was tight after the car repair", "What wiped out {A}'s money this month?"},
			{"I get so anxious before flying, it's ridiculous", "Window seat, noise cancelling headphones and a really boring audiobook", "said flying made them anxious", "What makes {A} anxious?"},
		},
	},
	{ // a new pet: the question's words are nowhere in the answer
		lines: []line{
			a("Meet {1}! We brought {2} home from the shelter today"),
			b("Oh my god look at that face. How old?"),
			a("{3}"),
		},
		questions: []ask{
			{"noword", "{5}", 0},
			{"temporal", "When did {A} adopt {1}?", 0},
			{"span", "How old is {A}'s {4}?", 2},
		},
		fact: "Adopted {1}, {2}, from a shelter on {date}",
		items: [][]string{
			{"Biscuit", "a three-legged greyhound", "They think about four. He slept for fourteen hours straight", "greyhound", "What kind of dog did {A} rescue?"},
			{"Mango", "a ginger kitten", "Twelve weeks, and she's already climbed the curtains", "kitten", "What pet has been wrecking {A}'s curtains?"},
			{"Pickle", "an elderly beagle", "Eleven! Nobody wanted him because of his age", "beagle", "Which old dog did {A} take in?"},
			{"Olive", "a pair of guinea pigs, Olive and Pip", "Only a year, the girls are obsessed", "guinea pigs", "What pets are {A}'s girls obsessed with?"},
		},
	},
	{ // a new pastime, told without ever naming the kind of thing it is
		lines: []line{
			a("Spent the whole of Sunday {1}. {2}"),
			b("Since when are you into that?"),
			a("{3}"),
		},
		questions: []ask{
			{"noword", "{5}", 0},
			{"span", "How did {A} get into {4}?", 2},
			{"paraphrase", "What did {A} spend a whole Sunday doing?", 0},
		},
		fact: "Took up {4}; said on {date}: {3}",
		items: [][]string{
			{"developing film in the darkroom at the community centre", "Came out smelling of vinegar but the prints look amazing", "My uncle gave me his old Pentax and it felt rude not to use it", "film photography", "What old-fashioned hobby did {A} get into thanks to an uncle?"},
			{"throwing pots at the studio on Gloucester Road", "Made four bowls, three collapsed", "Saw a taster session on Instagram and thought why not", "pottery", "What crafty hobby did {A} try after seeing an ad?"},
			{"on the allotment digging out bindweed", "Finally planted the garlic", "The waiting list came through after two years", "gardening", "What outdoor hobby did {A} wait ages for?"},
			{"learning to splice rope for the boat", "My fingers are shredded", "Joined the sailing club in spring after that taster day", "sailing", "Which hobby has {A} been practising for the club?"},
			{"bouldering at the climbing wall", "Finally got up the purple route", "Max dragged me along in January and I got hooked", "climbing", "What sport did Max get {A} into?"},
			{"practising scales on the cello", "The neighbours must hate me", "I played as a kid and found my old one in Mum's loft", "the cello", "What instrument has {A} picked up again?"},
			{"sketching people in the park", "Drew a man asleep on a bench for an hour", "Did an evening class in life drawing last term", "drawing", "What hobby has {A} kept up since an evening class?"},
			{"restoring the old Raleigh I found in a skip", "New chain, new brakes, it actually rides", "Watched too many repair videos during lockdown", "bike restoration", "What hobby did {A} pick up during lockdown?"},
		},
	},
	{ // a new job: where is in the reply, when is the date of the news
		lines: []line{
			a("Handed in my notice at {4} today"),
			b("WHAT. Where are you going?"),
			a("{1} offered me {2}. I start {3}"),
			b("That's massive, congratulations"),
		},
		questions: []ask{
			{"temporal", "When did {A} quit {4}?", 0},
			{"span", "Where is {A}'s new job?", 2},
			{"paraphrase", "What position was {A} offered?", 2},
		},
		fact: "Resigned from {4} on {date} to join {1} as {5}",
		items: [][]string{
			{"The Ordnance Survey", "a cartographer role", "at the start of next month", "the insurance company", "a cartographer"},
			{"A little bakery in Totterdown", "the head baker job", "in two weeks", "the bank", "head baker"},
			{"The children's hospital", "a ward manager post", "after Easter", "the GP surgery", "ward manager"},
			{"A games studio in Leamington", "a junior animator position", "on the first", "the call centre", "junior animator"},
		},
	},
	{ // an injury: temporal, with the verb in another form
		lines: []line{
			a("{1}"),
			b("Ouch! Are you ok??"),
			a("{2}"),
		},
		questions: []ask{
			{"temporal", "When did {A} {3}?", 0},
			{"span", "How long will {A} be out of action after {4}?", 2},
			{"paraphrase", "{6}", 0},
		},
		fact: "{5} on {date}; {2}",
		items: [][]string{
			{"Came off my bike on the canal path and broke my wrist", "Cast for six weeks. Typing this with one thumb", "break their wrist", "the bike accident", "Broke a wrist falling off a bike on the canal path", "Where did {A} come off the bike?"},
			{"Rolled my ankle on the stairs at the station this morning, it's purple", "Physio says no running for a month at least", "sprain an ankle", "the ankle injury", "Sprained an ankle on station stairs", "Which stairs did {A} fall on?"},
			{"Put my back out lifting the washing machine", "Flat on the floor, doctor said ten days of rest", "hurt their back", "lifting the washing machine", "Hurt their back lifting a washing machine", "What was {A} lifting when the back went?"},
			{"Sliced my thumb open chopping onions, three stitches", "Can't cook or play guitar for a fortnight, tragic", "cut their thumb", "the kitchen accident", "Needed three stitches after cutting a thumb on a knife", "How many stitches did {A} need?"},
		},
	},
	{ // a recommendation asked for and given: the reply holds the title
		lines: []line{
			b("Read anything good lately? I need something for the train"),
			a("{1}"),
			b("Adding it to the list"),
		},
		questions: []ask{
			{"reply", "What {3} did {A} recommend to {B}?", 1},
		},
		fact: "Recommended a book to {B} on {date}: {2}",
		items: [][]string{
			{"Piranesi. Strangest, loveliest thing I've read in years, a man alone in a house full of statues", "Piranesi by Susanna Clarke", "fantasy novel"},
			{"The Remains of the Day, finally got round to it. I cried on the bus", "The Remains of the Day", "classic novel"},
			{"Project Hail Mary. Astronaut wakes up with amnesia, it's so much fun", "Project Hail Mary", "sci-fi book"},
			{"Braiding Sweetgrass. Slow but it changed how I look at my garden", "Braiding Sweetgrass", "nature writing"},
			{"Anything by Tana French, start with In the Woods", "the Tana French novels, starting with In the Woods", "crime author"},
		},
	},
	{ // family news: the relative is named two messages before the news
		lines: []line{
			a("My {1} rang last night"),
			b("Oh how's {2} doing?"),
			a("{3}"),
			b("{4}"),
		},
		questions: []ask{
			{"span", "What news did {A}'s {1} have?", 2},
			{"paraphrase", "{6}", 2},
		},
		fact: "{A}'s {1} {5} (heard on {date})",
		items: [][]string{
			{"sister", "she", "She's pregnant! Due in August and it's twins", "Twins!! Tell her congratulations from me", "is expecting twins in August", "When are {A}'s sister's twins due?"},
			{"dad", "he", "He's finally retiring after thirty five years driving buses", "He's earned it. Party?", "is retiring after thirty-five years as a bus driver", "How long has {A}'s dad been driving buses?"},
			{"brother", "he", "He got engaged to Sam on top of Snowdon in a hailstorm", "That's the most him thing ever", "got engaged to Sam on Snowdon", "Where did {A}'s brother get engaged?"},
			{"aunt", "she", "She's selling the farm and moving to Spain, we're all in shock", "Wow. End of an era", "is selling the farm and moving to Spain", "Where is {A}'s aunt moving to?"},
			{"grandma", "she", "She passed her driving test at seventy eight, first go", "Legend. Absolute legend", "passed a driving test at seventy-eight", "How old was {A}'s grandma when she passed her driving test?"},
			{"cousin", "he", "He's been picked for the Wales under 21 rugby squad", "No way! We have to go and watch", "was picked for the Wales under-21 rugby squad", "Which squad was {A}'s cousin picked for?"},
		},
	},
	{ // a night out: temporal on the message that says it happened
		lines: []line{
			a("{1}"),
			b("{2}"),
		},
		questions: []ask{
			{"temporal", "When did {A} {3}?", 0},
			{"paraphrase", "{5}", 0},
		},
		fact: "{4} on {date}",
		items: [][]string{
			{"Saw Fontaines D.C. at the Academy last night, my ears are still ringing", "Jealous!! Were they loud?", "go to the Fontaines D.C. gig", "Went to a Fontaines D.C. concert at the Academy", "Where did {A} see Fontaines D.C.?"},
			{"We did the comedy club on King Street, laughed so hard I cried", "Who was on?", "go to a comedy night", "Went to a comedy club on King Street", "Which street is the comedy club {A} went to on?"},
			{"Finally went to that Korean place on Stokes Croft, the fried chicken is unreal", "Told you!", "try the Korean restaurant", "Ate at a Korean restaurant on Stokes Croft", "What did {A} think of the Korean place's fried chicken?"},
			{"Watched the fireworks from the top of Brandon Hill with the neighbours", "Beautiful night for it", "watch the fireworks", "Watched fireworks from Brandon Hill", "Where did {A} watch the fireworks from?"},
			{"Went to the Hockney exhibition, the room of iPad drawings was my favourite", "I've been meaning to go!", "see the Hockney exhibition", "Visited the Hockney exhibition", "Which room did {A} like best at the Hockney exhibition?"},
			{"Did the pub quiz at the Hope and Anchor, we came second to the teachers again", "The teachers always win", "go to the pub quiz", "Came second at the Hope and Anchor pub quiz", "Who beat {A}'s team at the pub quiz?"},
		},
	},
	{ // cooking: where the recipe came from is in the reply
		lines: []line{
			a("Made {1} for dinner tonight, proper restaurant vibes"),
			b("Recipe please!!"),
			a("{2}"),
		},
		questions: []ask{
			{"span", "Where did {A} get the recipe for the {3}?", 2},
			{"paraphrase", "What did {A} cook that felt like a restaurant meal?", 0},
		},
		fact: "Cooked {1} on {date}; {4}",
		items: [][]string{
			{"a massive paella", "It's from Jose's grandmother, he wrote it on a napkin for me", "paella", "the recipe came from a friend's grandmother"},
			{"shakshuka with homemade flatbreads", "Ottolenghi, the orange book. Don't skip the cumin", "shakshuka", "the recipe is from an Ottolenghi book"},
			{"beef rendang that took five hours", "Off a YouTube channel run by a Malaysian auntie, she's brilliant", "rendang", "the recipe came from a YouTube cook"},
			{"my first ever sourdough loaf", "The starter is from the bakery down the road, the method from a library book", "sourdough", "the starter came from a local bakery"},
			{"dumplings from scratch, sixty of them", "My flatmate's mum taught us over video call", "dumplings", "a flatmate's mother taught them over video call"},
		},
	},
	{ // a dislike, said without the word
		lines: []line{
			a("{1}"),
			b("{2}"),
		},
		questions: []ask{
			{"noword", "What does {A} {3}?", 0},
		},
		fact: "{4} (said on {date})",
		items: [][]string{
			{"Someone brought coriander salad to the work lunch and I had to leave the room, tastes like soap", "Haha you and your soap leaves", "hate eating", "Cannot stand coriander, which tastes like soap to them"},
			{"Why does every wedding have a ceilidh now, I'd rather do my taxes than dance", "You're such a grump", "refuse to do at parties", "Hates dancing at weddings"},
			{"The new neighbours have a leaf blower and they use it at 7am on Saturdays. I could scream", "Earplugs and revenge", "find most annoying at the weekend", "Is driven mad by the neighbours' early leaf blower"},
			{"Got stuck in a lift for twenty minutes, never again, stairs forever", "That's my worst nightmare", "avoid in buildings now", "Avoids lifts after being stuck in one"},
		},
	},
	{ // an achievement with a figure in the reply
		lines: []line{
			a("{1}"),
			b("And?? What was the time?"),
			a("{2}"),
		},
		questions: []ask{
			{"reply", "What time did {A} get in {3}?", 2},
			{"temporal", "When did {A} do {3}?", 0},
		},
		fact: "{4} on {date}: {2}",
		items: [][]string{
			{"I DID IT. Finished the Bristol half marathon, legs are jelly", "1:52:40! Seven minutes off my goal", "the half marathon", "Ran the Bristol half marathon"},
			{"Swam across the lake at the open water event, I'm frozen", "Forty one minutes for the two kilometres", "the open water swim", "Swam two kilometres in an open water event"},
			{"Cycled London to Brighton with the club today", "Five hours ten including the Ditchling Beacon crawl", "the London to Brighton ride", "Cycled from London to Brighton"},
		},
	},
	{ // house news: a span over the naming message and the detail
		lines: []line{
			a("We got the keys to the {1}!!"),
			b("Finally! Send pics"),
			a("{2}"),
		},
		questions: []ask{
			{"span", "What's {A}'s new {1} like?", 2},
			{"temporal", "When did {A} get the keys to the {1}?", 0},
		},
		fact: "Got the keys to a new {1} on {date}: {2}",
		items: [][]string{
			{"flat", "Tiny kitchen, massive windows, and you can see the suspension bridge from the bath"},
			{"house", "Three bedrooms, a garden full of brambles and a cellar that floods apparently"},
		},
	},
	{ // a worry about someone else, answered by the other
		lines: []line{
			b("How's {1} getting on?"),
			a("{2}"),
			b("{3}"),
		},
		questions: []ask{
			{"span", "How is {A}'s {4} doing?", 1},
			{"paraphrase", "{5}", 1},
		},
		fact: "{A} said on {date} of their {4}: {2}",
		items: [][]string{
			{"your mum after the operation", "Up and about, complaining about hospital food, so back to normal", "Ha, good sign", "mother after her operation", "Is {A}'s mum still complaining about the hospital food?"},
			{"Leo at the new school", "He cried the first week but now he's got a best friend called Ibrahim", "Bless him", "son at the new school", "Who is Leo's best friend at school?"},
			{"the tomato plants", "Blight. Every one. I'm devastated", "Noooo", "tomato plants", "What happened to {A}'s tomatoes?"},
			{"the van conversion", "Bed's in, solar panel's on, just the curtains to go", "You'll be off by summer", "van conversion", "Is the solar panel on {A}'s van yet?"},
		},
	},
}
