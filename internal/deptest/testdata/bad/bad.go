package bad

import (
	_ "fmt"
	_ "github.com/searxgate/searxgate/store"
)
