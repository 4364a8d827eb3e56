package bad

import (
	_ "fmt"
	_ "searxgate/store"
)
