window.rulesdslPreviews("burning_wheel/stock.html", {});
