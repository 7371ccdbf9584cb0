package main

// Small talk between the events: the same topics come back all the time
// (work, running, sleep, family, food, trips, books, the weather), so the
// words of a question about one event are also in many messages that do not
// answer it, as in a real chat log.

var whens = []string{
	"This morning", "Last night", "Yesterday", "After work", "At lunch", "On Saturday",
	"Earlier", "Tonight", "On the way home", "Before the school run", "All afternoon", "On Sunday",
}

var doings = []string{
	"I ran 8k along the river, slow but it counts",
	"I fell asleep on the sofa at nine like a pensioner",
	"the dog next door barked for two hours straight",
	"I had the longest meeting of my life about a spreadsheet",
	"I made soup with everything left in the fridge",
	"I finally booked the car in for its MOT",
	"my sister sent me forty photos of her garden",
	"I tried a new running route and got completely lost",
	"the train was cancelled again so I worked from the café",
	"I cleared out the spare room, found my old school reports",
	"work sent everyone home early because the heating broke",
	"I read three chapters in the bath until the water went cold",
	"I burnt the rice, the whole flat smells of it",
	"Dad called to ask how to forward an email, took forty minutes",
	"it rained so hard the garden turned into a pond",
	"I watched two episodes of that baking show and now I want cake",
	"the kids built a fort out of every cushion in the house",
	"I did the big shop and forgot the one thing I went for",
	"I sat in traffic on the ring road for an hour",
	"my brother came round and ate all the biscuits",
	"we had a fire drill at work in the pouring rain",
	"I walked up to the viewpoint and watched the sunset",
	"I tidied my desk for the first time this year",
	"I signed up for a yoga class and then skipped it",
	"I cooked a curry that was way too spicy, eyes streaming",
	"the boss announced another reorganisation, third this year",
	"I got the bus to town and bought nothing",
	"Mum sent me a voice note that lasted eleven minutes",
	"I planned next month's trip down to the last train",
	"I finished the book club book just in time, didn't like it",
	"the washing machine started making a grinding noise",
	"we went for a long walk in the woods and found mushrooms",
	"I had pizza for dinner, no regrets",
	"I stayed late to finish the report nobody will read",
	"I repotted all the houseplants on the balcony",
	"I spent ages on the phone to the bank",
	"I went swimming at the lido, freezing but lovely",
	"I finally fixed the wobbly shelf in the kitchen",
	"the neighbours had a party until 2am",
	"I looked at flights for the summer and then closed the laptop",
}

var feelings = []string{
	"Feeling good about it", "Not my finest hour", "Honestly a decent day", "Need a nap now",
	"Life is glamorous", "Small wins", "Send help", "Could be worse", "Can't complain",
	"Brain is fried", "Treating myself to a takeaway later", "Early night for me",
}

var reactions = []string{
	"Haha classic", "Oh no", "Love that", "Same honestly", "Ugh, sorry", "Nice one", "Ha!",
	"That's so you", "Sounds about right", "Proper result", "Oof", "Brilliant", "Tell me about it",
	"I'm laughing", "Good for you", "Noooo", "Yesss", "Fair enough", "Hang in there", "Wild",
}

// chats are small exchanges where one asks and the other answers, on the
// same recurring topics.
var chats = [][2]string{
	{"How was work today?", "Long. Lots of emails, not much else"},
	{"Did you sleep ok?", "Not really, the street was noisy again"},
	{"Any plans for the weekend?", "Nothing at all and I can't wait"},
	{"How's the running going?", "Slowly. My knees are not twenty any more"},
	{"What are you having for dinner?", "Beans on toast, living the dream"},
	{"Have you spoken to your family lately?", "Had a long call on Sunday, all fine"},
	{"Are you still reading that massive book?", "Halfway, it's a doorstop"},
	{"Is the weather as grim there?", "Grey and drizzly, as always"},
	{"Did you ever sort the car out?", "Still making that noise, I'm ignoring it"},
	{"When's your next trip?", "No idea, need to save first"},
	{"How are the kids?", "Loud. Happy. Sticky"},
	{"Did you watch the match?", "Only the second half, what a finish"},
	{"Fancy a call this week?", "Thursday evening works"},
	{"How's the back?", "Bit better, thanks for asking"},
	{"Still doing the early gym sessions?", "Twice this week, proud of myself"},
	{"What did you get up to last night?", "Laundry and a film, very rock and roll"},
	{"Is your boss still on your case?", "Quieter this week, touch wood"},
	{"How's the garden looking?", "Slugs have eaten everything"},
}

var openers = []string{"Hey!", "Morning", "Hiya", "Evening!", "You around?", "Hey you", "Happy Friday", "Ugh, Monday"}
var greetings = []string{"Hey!", "Yep, what's up?", "Hiya", "Here!", "Hello hello", "Morning!"}
var closers = []string{"Right, bed. Night!", "Off to make tea, speak soon", "Gotta run, talk later", "Night night", "Catch you tomorrow", "Ok I'm off, love you x"}

// profile holds standing facts a note-taker keeps about each person, one
// value of each chosen per person.
var profile = [][]string{
	{"drinks %s every morning", "an oat flat white", "strong black tea", "green tea", "a double espresso"},
	{"grew up in %s", "Swindon", "a village outside Cork", "Leicester", "Accra"},
	{"supports %s", "Bristol City", "nobody, hates football", "Arsenal", "the local netball team"},
	{"is allergic to %s", "cats", "peanuts", "penicillin", "wasps"},
	{"has a birthday in %s", "early March", "late October", "the middle of July", "December"},
	{"commutes by %s", "bike", "bus", "train", "car, reluctantly"},
	{"listens to %s while working", "lo-fi playlists", "cricket on the radio", "old jazz records", "true crime podcasts"},
	{"lives in %s", "Easton", "Redland", "Bedminster", "Southville"},
	{"has %s siblings", "two", "three", "no", "four"},
	{"is learning %s on an app", "Italian", "Welsh", "Japanese", "Portuguese"},
	{"wants to visit %s one day", "Patagonia", "Vietnam", "New Zealand", "the Faroe Islands"},
	{"prefers %s holidays", "city", "beach", "walking", "camping"},
	{"keeps a %s on the kitchen windowsill", "basil plant", "chilli plant", "row of succulents", "jar of sourdough starter"},
	{"once met %s", "a famous chef at a train station", "the Prime Minister at a school fete", "a Formula One driver in a lift", "an astronaut at a wedding"},
	{"wears %s", "glasses for reading", "contact lenses", "a smartwatch everywhere", "the same green coat every winter"},
}
