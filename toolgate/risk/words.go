package risk

import "strings"

// kind is what a verb says about an operation.
type kind int

const (
	none kind = iota
	reads
	changes // changes state: enough to make a GET more than a read
	destroys
	irreversible // merges, transfers, forces: done, it cannot be taken back
	movesMoney
	approves
	reachesIn // runs commands in, or connects into, a running system
)

// claims are the sentences a reason starts with, one per kind; the
// evidence follows in parentheses.
var claims = map[kind]string{
	changes:      "its name says it changes state",
	destroys:     "it destroys or undoes something",
	irreversible: "it makes a change that cannot be taken back",
	movesMoney:   "it moves money",
	approves:     "it approves or grants something on someone's behalf",
	reachesIn:    "it runs commands in, or opens a connection into, a running system",
}

// verbs maps each verb to its kind. Verbs that are also nouns of
// resources ("charges", "transfers", "archives") are in nounVerbs as well:
// they count only where a verb stands, never in a list of resources.
var verbs = map[string]kind{}

var nounVerbs = set("pay charge capture payout refund transfer topup withdraw disburse remit purchase archive proxy")

func init() { nounVerbs["top up"] = true }

func init() {
	add := func(k kind, list string) {
		for _, w := range strings.Fields(list) {
			verbs[strings.ReplaceAll(w, "_", " ")] = k
		}
	}
	add(reads, "get list read watch fetch retrieve return search find lookup look check test show view describe "+
		"download export compare count query preview inspect info poll verify validate estimate calculate render")
	add(changes, "create add set update modify change edit post send put insert register request invite join leave "+
		"open start stop run rerun trigger enable grant assign unassign publish push share mark complete install "+
		"connect subscribe unsubscribe follow unfollow star unstar pin unpin upload import sync move rename accept "+
		"submit generate issue rotate replace patch apply upsert restore dispatch notify redeliver lock unlock "+
		"confirm process authorize initiate reverse close")
	add(destroys, "delete remove purge destroy cancel revoke terminate reset wipe erase truncate void kill uninstall "+
		"disable deactivate unpublish redact detach evict archive kick ban expel invalidate reject "+
		"suspend unlink abort reboot shutdown shut_down power_off poweroff power_cycle rebuild reimage deprovision "+
		"decommission rollback roll_back overwrite drop")
	add(irreversible, "merge transfer force")
	add(movesMoney, "pay charge capture payout refund topup top_up withdraw disburse remit purchase buy")
	add(approves, "approve")
	add(reachesIn, "exec execute proxy portforward port_forward tunnel attach")
}

// irregular maps nominalisations and past forms that the suffix rules
// below do not find to their verb.
var irregular = map[string]string{
	"revocation": "revoke", "termination": "terminate", "deactivation": "deactivate", "invalidation": "invalidate",
	"execution": "execute", "cancellation": "cancel", "deletion": "delete", "paid": "pay", "withdrawal": "withdraw",
	"disbursement": "disburse", "remittance": "remit", "creation": "create", "closure": "close",
}

// form is how a word relates to its verb.
type form int

const (
	base    form = iota // revoke, proxy
	noun                // eviction, approval: naming the act
	plural              // revokes, charges: a third person, or a plural noun
	inflect             // revoked, revoking
)

// forms maps every form of every verb to its verb and form, built once
// from the verbs: finding a word's verb is one look-up.
var forms = map[string]struct {
	verb string
	form form
}{}

func init() {
	put := func(w, v string, f form) {
		if _, ok := forms[w]; !ok && w != "" {
			forms[w] = struct {
				verb string
				form form
			}{v, f}
		}
	}
	for v := range verbs {
		put(v, v, base)
	}
	for w, v := range irregular {
		put(w, v, noun)
		put(w+"s", v, plural)
	}
	for v := range verbs {
		if strings.Contains(v, " ") {
			continue
		}
		stems := []string{v}
		if e, ok := strings.CutSuffix(v, "e"); ok {
			stems = append(stems, e) // merge → merg-ing, approve → approv-al
		}
		if n := len(v); n >= 3 && !isVowel(v[n-1]) && isVowel(v[n-2]) {
			stems = append(stems, v+v[n-1:]) // cancel → cancell-ed
		}
		if y, ok := strings.CutSuffix(v, "y"); ok {
			put(y+"ies", v, plural) // proxy → proxies
		}
		put(v+"s", v, plural)
		put(v+"es", v, plural)
		for _, st := range stems {
			put(st+"ed", v, inflect)
			put(st+"ing", v, inflect)
			for _, suf := range []string{"ion", "ation", "al"} {
				put(st+suf, v, noun)
				put(st+suf+"s", v, plural)
			}
		}
		put(v+"d", v, inflect)
	}
}

// pairStarts are the first words of the verbs of two words.
var pairStarts = map[string]bool{}

func init() {
	for v := range verbs {
		if first, _, ok := strings.Cut(v, " "); ok {
			pairStarts[first] = true
		}
	}
}

func isVowel(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }

// lemma returns the verb that w is a form of, and which form, or "".
func lemma(w string) (string, form) {
	if f, ok := forms[w]; ok {
		return f.verb, f.form
	}
	return "", base
}

// where says how much of a verb's meaning a place in an operation keeps.
type where int

const (
	// verbSlot is where the operation's own verb stands: the first word
	// of its id, summary or description ("Revoke", "Revokes"). Past forms
	// and gerunds count only in actions ("stepCompleted"): elsewhere they
	// are adjectives ("List deleted items", "Closing down - Get …").
	verbSlot where = iota
	// actionSlot is a path's final segment, when it names an action
	// ("/capture", "/auth.revoke"): plurals there name collections
	// ("/charges"), not acts.
	actionSlot
	// getSlot is a GET's final path segment: only a verb's plain or
	// past form says that it acts ("/auth.revoke", "stepCompleted"); a
	// noun names what it reads ("/approval", "/installation").
	getSlot
	// nameSlot is the rest of its id and summary: verbs that are also
	// nouns of resources ("charges", "archives") do not count there.
	nameSlot
)

// verbIn returns the first verb of one of the kinds in words, as written
// and as its verb. Pairs of words count too ("power off").
func verbIn(words []string, at where, kinds ...kind) (word, verb string, k kind) {
	for i, w := range words {
		pair := ""
		if i+1 < len(words) && pairStarts[w] {
			pair = w + " " + words[i+1]
		}
		for _, c := range [2]string{pair, w} {
			if c == "" {
				continue
			}
			v, f := lemma(c)
			if v == "" || (at >= nameSlot && nounVerbs[v]) || (at != verbSlot && at != nameSlot && f == plural) ||
				(f == inflect && at != actionSlot && at != getSlot) || (at == getSlot && f == noun) {
				continue
			}
			for _, want := range kinds {
				if verbs[v] == want {
					return c, v, want
				}
			}
		}
	}
	return "", "", none
}

// Nouns, by what changing them does. Stems are found inside compound words
// ("clusterrolebindings", "mutatingwebhookconfigurations"); the other
// words only whole.
type nouns struct {
	words map[string]bool
	stems []string
}

func (n nouns) in(words []string) string {
	for _, w := range words {
		if n.words[w] {
			return w
		}
		for _, s := range n.stems {
			if strings.Contains(w, s) {
				return w
			}
		}
	}
	return ""
}

var (
	// Reading these is already privileged: their values are secrets.
	secretNouns = nouns{set("key keys oauth"),
		[]string{"secret", "token", "password", "credential", "kubeconfig", "apikey", "privatekey", "accesskey", "passphrase"}}
	// Key material that is public by nature: its keys are no secret.
	publicKeyWords = set("public gpg pgp ssh jwk jwks")
	// Changing these changes who may do what.
	accessNouns = nouns{set("role roles member members collaborator collaborators invitation invitations owner owners " +
		"access acl acls grant grants sso saml scim protection ruleset rulesets restriction restrictions privilege " +
		"privileges impersonation login logins team teams bypass"),
		[]string{"rolebinding", "clusterrole", "permission", "membership", "policy", "policies"}}
	// Changing these is an administrator's act.
	adminNouns = nouns{nil, []string{"admin"}}
	// Changing these changes an account or organisation itself, when the
	// operation is on them (not on what they contain).
	accountNouns = nouns{set("account accounts organization organizations org orgs enterprise enterprises workspace workspaces tenant tenants"), nil}
	billingNouns = nouns{set("spend spending"), []string{"billing", "budget", "spendlimit"}}
	webhookNouns = nouns{set("hook hooks"), []string{"webhook"}}
	certNouns    = nouns{set("cert certs csr csrs"), []string{"certificate"}}
	// Money moves when one of these is created.
	moneyNouns = set("charge charges payment payments payout payouts transfer transfers topup topups refund refunds " +
		"withdrawal withdrawals disbursement disbursements remittance remittances reversal reversals purchase purchases")
	// attach reaches into a running system only when it is a process
	// that is attached to.
	processNouns = set("container containers pod pods process processes console consoles tty terminal session sessions")
	// Actions that move money when what they act on is a payment: a
	// confirmed payment is charged, a reversed payout debits an account, a
	// closed dispute is lost.
	moneyActions = set("confirm process execute complete authorize submit initiate reverse close")
	// The body's properties that choose the operation's action.
	actionProperties = set("type action actions command operation op event kind verb task")
)

func set(list string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(list) {
		m[w] = true
	}
	return m
}
