'use strict';

require('./parse');

require('./stringify');

require('./utils');
